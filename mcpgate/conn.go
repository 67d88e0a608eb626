package mcpgate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conn carries JSON-RPC frames as bytes, one whole message each way.
// Write may be called from several goroutines.
type Conn interface {
	// Read returns the next frame; io.EOF when the other side is gone.
	// A frame over MaxFrame is an error of its own (errFrameTooLarge),
	// after which reading goes on.
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, frame []byte) error
	Close() error
}

// Transport connects to one MCP server (or is one agent's side).
type Transport interface {
	Connect(ctx context.Context) (Conn, error)
}

// IOTransport is newline-delimited JSON over a reader and a writer: an
// MCP server's stdio (or the gateway's own, toward the agent).
type IOTransport struct {
	Reader io.Reader
	Writer io.Writer
	Closer io.Closer // closed with the Conn, if set
}

func (t *IOTransport) Connect(context.Context) (Conn, error) {
	return newLineConn(t.Reader, t.Writer, t.Closer), nil
}

// CommandTransport starts a server's command and speaks to its stdio.
type CommandTransport struct {
	Command *exec.Cmd
	// TerminateDuration is how long the server has to exit once its
	// stdin is closed, before it is killed (default 5s).
	TerminateDuration time.Duration
}

func (t *CommandTransport) Connect(context.Context) (Conn, error) {
	stdin, err := t.Command.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := t.Command.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := t.Command.Start(); err != nil {
		return nil, err
	}
	wait := t.TerminateDuration
	if wait <= 0 {
		wait = 5 * time.Second
	}
	return newLineConn(stdout, stdin, &processCloser{cmd: t.Command, stdin: stdin, wait: wait}), nil
}

type processCloser struct {
	cmd   *exec.Cmd
	stdin io.Closer
	wait  time.Duration
	once  sync.Once
}

func (p *processCloser) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(p.wait):
			p.cmd.Process.Kill()
			<-done
		}
	})
	return nil
}

// lineConn is newline-delimited JSON: a reader goroutine splits lines,
// bounded by MaxFrame (a longer line is skipped whole, reported once).
type lineConn struct {
	w      io.Writer
	closer io.Closer
	wmu    sync.Mutex
	frames chan lineRead
	ended  chan struct{} // the reader stopped, for endErr
	endErr error
	done   chan struct{}
	once   sync.Once
}

type lineRead struct {
	b   []byte
	err error
}

func newLineConn(r io.Reader, w io.Writer, c io.Closer) *lineConn {
	lc := &lineConn{w: w, closer: c, frames: make(chan lineRead, 16), ended: make(chan struct{}), done: make(chan struct{})}
	go lc.readLoop(r)
	return lc
}

func (c *lineConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	send := func(lr lineRead) bool {
		select {
		case c.frames <- lr:
			return true
		case <-c.done:
			return false
		}
	}
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, errFrameTooLarge) {
				if send(lineRead{err: errFrameTooLarge}) {
					continue
				}
				return
			}
			c.endErr = err
			close(c.ended)
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !send(lineRead{b: line}) {
			return
		}
	}
}

// readLine reads one line without its newline, at most MaxFrame bytes;
// a longer one is read to its end and dropped (errFrameTooLarge).
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > MaxFrame+1 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return nil, errFrameTooLarge
			}
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0 && !over:
			return bytes.TrimRight(buf, "\r\n"), nil
		default:
			return nil, err
		}
	}
}

func (c *lineConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case lr := <-c.frames:
		return lr.b, lr.err
	case <-c.ended:
		select {
		case lr := <-c.frames:
			return lr.b, lr.err
		default:
			return nil, c.endErr
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(_ context.Context, frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, 0, len(frame)+1)
	buf = append(append(buf, frame...), '\n')
	// A frame holds a line break only as JSON's white space (one in a
	// string is escaped): a blank keeps the frame one line.
	for i := 0; i < len(buf)-1; i++ {
		if buf[i] == '\n' || buf[i] == '\r' {
			buf[i] = ' '
		}
	}
	_, err := c.w.Write(buf)
	return err
}

func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		if c.closer != nil {
			c.closer.Close()
		}
	})
	return nil
}

// SDKTransport carries frames over one of the go-sdk's transports (its
// in-memory ones, in tests): each frame is decoded into the SDK's message
// and encoded back, so it is for tests and tools, not the gateway's path.
func SDKTransport(t mcp.Transport) Transport { return sdkTransport{t} }

type sdkTransport struct{ t mcp.Transport }

func (s sdkTransport) Connect(ctx context.Context) (Conn, error) {
	c, err := s.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sdkConn{c: c}, nil
}

type sdkConn struct {
	c   mcp.Connection
	wmu sync.Mutex
}

func (s *sdkConn) Read(ctx context.Context) ([]byte, error) {
	m, err := s.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeMessage(m)
}

func (s *sdkConn) Write(ctx context.Context, frame []byte) error {
	m, err := jsonrpc.DecodeMessage(frame)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.c.Write(ctx, m)
}

func (s *sdkConn) Close() error { return s.c.Close() }
