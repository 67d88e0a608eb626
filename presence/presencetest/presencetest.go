//go:build linux

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

// Session is a command running on a pseudo-terminal whose master the
// test holds: what the terminal shows is kept, and the test may type.
type Session struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	screen bytes.Buffer
	grew   chan struct{} // closed and replaced whenever the screen grows
	done   chan struct{} // the master reads no more
	wait   chan error
	closed sync.Once
}

// Start starts cmd with a new pseudo-terminal as its controlling
// terminal, in a session of its own.
func Start(cmd *exec.Cmd) (*Session, error) {
	p, err := Open()
	if err != nil {
		return nil, err
	}
	p.Attach(cmd)
	if err := cmd.Start(); err != nil {
		p.Close()
		return nil, err
	}
	p.Slave.Close() // the child holds it now; reads end when it closes
	s := &Session{cmd: cmd, master: p.Master, grew: make(chan struct{}), done: make(chan struct{}), wait: make(chan error, 1)}
	go s.read()
	go func() { s.wait <- cmd.Wait() }()
	return s, nil
}

func (s *Session) read() {
	defer close(s.done)
	buf := make([]byte, 4096)
	for {
		n, err := s.master.Read(buf)
		s.mu.Lock()
		s.screen.Write(buf[:n])
		close(s.grew)
		s.grew = make(chan struct{})
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Screen is what the terminal has shown so far.
func (s *Session) Screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// Expect waits up to d for re to match what the terminal shows, and
// returns the match and its groups.
func (s *Session) Expect(re *regexp.Regexp, d time.Duration) ([]string, error) {
	end := time.After(d)
	for {
		s.mu.Lock()
		m := re.FindStringSubmatch(s.screen.String())
		grew := s.grew
		s.mu.Unlock()
		if m != nil {
			return m, nil
		}
		select {
		case <-grew:
		case <-s.done:
			if m := re.FindStringSubmatch(s.Screen()); m != nil {
				return m, nil
			}
			return nil, fmt.Errorf("presencetest: the terminal closed without showing %s; it showed %q", re, s.Screen())
		case <-end:
			return nil, fmt.Errorf("presencetest: the terminal did not show %s within %s; it showed %q", re, d, s.Screen())
		}
	}
}

// Type types line and Enter on the terminal.
func (s *Session) Type(line string) error {
	_, err := s.master.Write([]byte(line + "\r"))
	return err
}

// Wait waits up to d for the command to exit and returns its exit code
// (-1 and an error when it did not exit by itself, and was killed).
func (s *Session) Wait(d time.Duration) (int, error) {
	var werr error
	select {
	case werr = <-s.wait:
	case <-time.After(d):
		s.cmd.Process.Kill()
		<-s.wait
		werr = fmt.Errorf("presencetest: the command did not end within %s", d)
	}
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
		s.master.Close() // a grandchild still holds the slave
		<-s.done
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return 0, nil
	case errors.As(werr, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), nil
	}
	return -1, werr
}

// Close kills the command if it still runs and closes the terminal; a
// second Close does nothing.
func (s *Session) Close() {
	s.closed.Do(func() {
		s.cmd.Process.Kill()
		select {
		case <-s.wait:
		case <-time.After(5 * time.Second):
		}
		s.master.Close()
	})
}

// Run runs cmd on a pseudo-terminal whose master the test holds, and
// answers veto's prompt as a person: when the prompt shows its code,
// typed(code) is typed, and Enter. It returns what the terminal showed
// and cmd's exit code (-1 with an error when it did not exit by itself
// within a minute).
func Run(cmd *exec.Cmd, typed func(code string) string) (screen string, exit int, err error) {
	s, err := Start(cmd)
	if err != nil {
		return "", -1, err
	}
	defer s.master.Close()
	go func() {
		if m, err := s.Expect(CodeRE, time.Minute); err == nil {
			s.Type(typed(m[1]))
		}
	}()
	exit, err = s.Wait(time.Minute)
	return s.Screen(), exit, err
}
