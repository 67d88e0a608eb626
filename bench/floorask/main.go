// Command floorask is the floor of a hook answered by a server: floor's
// work (read the hook's JSON from stdin, decode it), then the event sent
// over a Unix socket to a long-lived server (floorserve) and its answer
// read and written to stdout, exit 0. The socket is driven by plain
// system calls, as veto-hook drives its own: no poller, no thread, no
// timer of the runtime's. A hook that hands its event to a server cannot
// cost less than a process like it and the server's round trip.
//
//	floorask SOCKET
package main

import (
	"encoding/json"
	"io"
	"os"
	"syscall"
)

func main() {
	if len(os.Args) != 2 {
		os.Exit(64)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(1)
	}
	var v map[string]any
	if err := json.Unmarshal(in, &v); err != nil {
		os.Exit(1)
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		os.Exit(1)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Args[1]}); err != nil {
		os.Exit(1)
	}
	for len(in) > 0 {
		n, err := syscall.Write(fd, in)
		if err != nil {
			os.Exit(1)
		}
		in = in[n:]
	}
	syscall.Shutdown(fd, syscall.SHUT_WR)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, buf)
		if err != nil {
			os.Exit(1)
		}
		if n == 0 {
			break
		}
		out = append(out, buf[:n]...)
	}
	if len(out) == 0 {
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
