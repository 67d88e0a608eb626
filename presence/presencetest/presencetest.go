// Package presencetest answers veto's presence proof in tests the way a
// person does: from a pseudo-terminal whose master the test itself holds,
// reading the code the prompt shows and typing it back. The test process
// must not be a guarded client (it must not run veto's hook itself; a
// stand-in client process should).
package presencetest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Pty is a pseudo-terminal pair: Master is what a terminal emulator
// holds, Slave what the programs in it use.
type Pty struct{ Master, Slave *os.File }

// Open opens a new pseudo-terminal pair.
func Open() (*Pty, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("presencetest: %w", err)
	}
	var unlock int32
	if err := ioctl(m, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		m.Close()
		return nil, fmt.Errorf("presencetest: unlockpt: %w", err)
	}
	var n uint32
	if err := ioctl(m, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		m.Close()
		return nil, fmt.Errorf("presencetest: ptsname: %w", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("presencetest: %w", err)
	}
	return &Pty{Master: m, Slave: s}, nil
}

func ioctl(f *os.File, req, arg uintptr) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, arg)
	})
	if errno != 0 {
		return errno
	}
	return nil
}

// Close closes both ends.
func (p *Pty) Close() {
	p.Master.Close()
	p.Slave.Close()
}

// Attach makes the slave cmd's controlling terminal, in a session of its
// own; its stdin, stdout and stderr stay what cmd says. The slave is
// handed over as descriptor 3 + len(ExtraFiles).
func (p *Pty) Attach(cmd *exec.Cmd) {
	cmd.ExtraFiles = append(cmd.ExtraFiles, p.Slave)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2 + len(cmd.ExtraFiles)}
}

// CodeRE finds the code in veto's prompt.
var CodeRE = regexp.MustCompile(`Type ([a-z0-9]+) and press Enter`)

// Run runs cmd with a new pseudo-terminal as its controlling terminal,
// the test holding the master, and answers veto's prompt: when the
// prompt shows its code, type(code) is typed and Enter. It returns what
// the terminal showed, and cmd's exit code (-1 when it did not exit by
// itself within a minute).
func Run(cmd *exec.Cmd, typed func(code string) string) (screen string, exit int, err error) {
	p, err := Open()
	if err != nil {
		return "", -1, err
	}
	defer p.Master.Close()
	p.Attach(cmd)
	if err := cmd.Start(); err != nil {
		p.Slave.Close()
		return "", -1, err
	}
	p.Slave.Close() // the child holds it now; reads end when it closes
	var mu sync.Mutex
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		answered := false
		buf := make([]byte, 4096)
		for {
			n, err := p.Master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			m := CodeRE.FindSubmatch(out.Bytes())
			mu.Unlock()
			if m != nil && !answered {
				answered = true
				p.Master.Write([]byte(typed(string(m[1])) + "\r"))
			}
			if err != nil {
				return
			}
		}
	}()
	wait := make(chan error, 1)
	go func() { wait <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-wait:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-wait
		werr = errors.New("presencetest: the command did not end within a minute")
	}
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		p.Master.Close() // a grandchild still holds the slave
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return out.String(), 0, nil
	case errors.As(werr, &ee) && ee.ExitCode() >= 0:
		return out.String(), ee.ExitCode(), nil
	}
	return out.String(), -1, werr
}
