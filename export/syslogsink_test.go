package export

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// frames is a syslog server on TCP for the tests: it reads octet-counted
// frames (RFC 6587 3.4.1) and keeps each message's run/seq.
type frames struct {
	mu    sync.Mutex
	got   map[string]int
	l     net.Listener
	conns []net.Conn
}

func listenFrames(t *testing.T, addr string) *frames {
	t.Helper()
	var l net.Listener
	var err error
	for range 100 { // the port of a server just closed may take a moment
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	f := &frames{got: map[string]int{}, l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			go f.read(t, c)
		}
	}()
	return f
}

func (f *frames) read(t *testing.T, c net.Conn) {
	r := bufio.NewReader(c)
	for {
		n, err := r.ReadString(' ')
		if err != nil {
			return
		}
		size, err := strconv.Atoi(n[:len(n)-1])
		if err != nil || size <= 0 || size > 1<<20 {
			t.Errorf("a frame's length %q", n)
			return
		}
		msg := make([]byte, size)
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		m, err := parseMessage(msg)
		if err != nil {
			t.Errorf("%v: %q", err, msg)
			continue
		}
		var ev struct {
			Run string `json:"run"`
			Seq uint64 `json:"seq"`
		}
		json.Unmarshal([]byte(m.text), &ev)
		f.mu.Lock()
		f.got[fmt.Sprintf("%s/%d", ev.Run, ev.Seq)]++
		f.mu.Unlock()
	}
}

func (f *frames) has(keys ...string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		if f.got[k] == 0 {
			return false
		}
	}
	return true
}

func (f *frames) close() {
	f.l.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}

// A syslog server that goes away is dialled again, with backoff, each
// refusal counted and the cursor kept; one that closed the connection and
// came back gets every later message (none written into the closed
// connection, where the first writes are accepted and lost).
func TestDeadSyslogServerReconnects(t *testing.T) {
	log := &memLog{}
	cur := &memCursors{at: map[string]int64{}, log: log}
	a := listenFrames(t, "127.0.0.1:0")
	addr := a.l.Addr().String()
	m := NewMetrics()
	stop := start(t, Config{Name: "s", Log: log, Cursors: cur, Sink: NewSyslog("tcp", addr, 16), Window: time.Second,
		Poll: 5 * time.Millisecond, SaveEvery: time.Millisecond, Metrics: m})
	defer stop()
	log.commit("r", 1, time.Now())
	eventually(t, "r/1 at the first server", func() bool { return a.has("r/1") })

	// The server closes the connection and another takes its place.
	a.close()
	b := listenFrames(t, addr)
	time.Sleep(20 * time.Millisecond)
	log.commit("r", 2, time.Now())
	eventually(t, "r/2 at the second server", func() bool { return b.has("r/2") })

	// No server at all: refusals counted, the cursor held behind r/3.
	b.close()
	t3 := time.Now()
	log.commit("r", 3, t3)
	eventually(t, "refusals counted", func() bool { return value(m.errors.WithLabelValues("s")) >= 2 })
	at, _ := cur.Load(context.Background(), "s")
	if at > t3.UnixNano() {
		t.Fatalf("the cursor moved past r/3, which no server took")
	}
	c := listenFrames(t, addr)
	defer c.close()
	eventually(t, "r/3 at the third server", func() bool { return c.has("r/3") })
}

// Over UDP each message is one datagram, a whole RFC 5424 message.
func TestSyslogUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	s := NewSyslog("udp", pc.LocalAddr().String(), 16)
	defer s.Close()
	recs := []Record{
		{Run: "r", Seq: 1, Kind: "invocation_allowed", Time: time.Now(), Body: []byte(`{"run":"r","seq":1}`)},
		{Run: "r", Seq: 2, Kind: "invocation_denied", Time: time.Now(), Body: []byte(`{"run":"r","seq":2}`)},
	}
	if err := s.Send(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range recs {
		buf := make([]byte, 65536)
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		m, err := parseMessage(buf[:n])
		if err != nil {
			t.Fatalf("%v: %q", err, buf[:n])
		}
		if m.msgid != string(recs[i].Kind) || m.text != string(recs[i].Body) || m.app != "veto" {
			t.Errorf("datagram %d: %q", i, buf[:n])
		}
	}
}
