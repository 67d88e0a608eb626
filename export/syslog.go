package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/vetohq/veto"
)

// Header is what an RFC 5424 message says besides its text. Format
// makes each field valid whatever it is given: printable US-ASCII
// (33–126), within the RFC's length, "-" when empty.
type Header struct {
	Facility int // 0–23; local0 is 16
	Hostname string
	AppName  string
	ProcID   string
}

// RFC 5424's field lengths (section 6).
const (
	maxHostname = 255
	maxAppName  = 48
	maxProcID   = 128
	maxMsgID    = 32
)

// Format appends one RFC 5424 message: PRI (facility and the record's
// severity), version 1, the event's time in UTC to the microsecond, the
// header's fields, MSGID the event's kind, no structured data, and as
// MSG the stored event's JSON in US-ASCII (every other character written
// as a \u escape, which JSON reads as the same string), so that MSG is
// MSG-ANY and needs no byte order mark. A body that is not JSON is
// written as a JSON string.
func Format(dst []byte, h *Header, r *Record) []byte {
	fac := h.Facility
	if fac < 0 || fac > 23 {
		fac = 1 // user
	}
	dst = append(dst, '<')
	dst = strconv.AppendInt(dst, int64(fac*8+severity(r.Kind)), 10)
	dst = append(dst, ">1 "...)
	if r.Time.IsZero() {
		dst = append(dst, '-')
	} else {
		dst = r.Time.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000Z")
	}
	dst = append(dst, ' ')
	dst = appendField(dst, h.Hostname, maxHostname)
	dst = append(dst, ' ')
	dst = appendField(dst, h.AppName, maxAppName)
	dst = append(dst, ' ')
	dst = appendField(dst, h.ProcID, maxProcID)
	dst = append(dst, ' ')
	dst = appendField(dst, string(r.Kind), maxMsgID)
	dst = append(dst, " - "...)
	return AppendASCIIJSON(dst, r.Body)
}

// severity is a record's: a refusal is a warning (4), anything else
// informational (6), as the gate logs denials at warn.
func severity(k veto.EventKind) int {
	switch k {
	case veto.EventDenied, veto.EventToolDenied, veto.EventApprovalRefused, veto.EventObservationRefused:
		return 4
	}
	return 6
}

// appendField writes a header field: s cut to n bytes, each byte outside
// printable US-ASCII written '_'; "-" (the NILVALUE) when s is empty.
func appendField(dst []byte, s string, n int) []byte {
	if s == "" {
		return append(dst, '-')
	}
	if len(s) > n {
		s = s[:n]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 33 || c > 126 {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

// AppendASCIIJSON appends b, a JSON text, with every character outside
// printable US-ASCII inside its strings written as a \u escape (control
// characters are escaped by JSON already, but not DEL; bytes that are
// not UTF-8 read as U+FFFD), and the whitespace between tokens dropped, so that the
// result is one line. A b that is not JSON is appended as a JSON string
// of its text.
func AppendASCIIJSON(dst, b []byte) []byte {
	if !json.Valid(b) {
		return appendASCIIString(dst, b)
	}
	in := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			i++
			continue
		case c == '"':
			in = !in
		case in && c == '\\':
			dst = append(dst, c, b[i+1])
			i += 2
			continue
		case in && c == 0x7f: // DEL: valid in a JSON string, not printable
			dst = appendEscape(dst, rune(c))
			i++
			continue
		case in && c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			dst = appendEscape(dst, r)
			i += size
			continue
		}
		dst = append(dst, c)
		i++
	}
	return dst
}

// appendASCIIString appends b as a JSON string in US-ASCII.
func appendASCIIString(dst, b []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c == 0x7f:
			dst = appendEscape(dst, rune(c))
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			dst = appendEscape(dst, r)
			i += size
			continue
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

func appendEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		dst = appendU(dst, 0xd800+(r>>10))
		return appendU(dst, 0xdc00+(r&0x3ff))
	}
	return appendU(dst, r)
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// Syslog sends records to a syslog server: over TCP each message framed
// by octet counting (RFC 6587 3.4.1, "LEN SP MSG"), over UDP one
// message a datagram (RFC 5426). A connection that failed, or that the
// server closed, is dialled again at the next batch.
type Syslog struct {
	network, addr string
	header        Header

	conn net.Conn
	w    *bufio.Writer
	buf  []byte
}

// maxDatagram is the largest UDP payload over IPv4.
const maxDatagram = 65507

// ParseSyslog reads a syslog address: tcp://HOST:PORT or udp://HOST:PORT,
// with an optional ?facility= (kern, user, …, local0–local7; default
// local0).
func ParseSyslog(s string) (network, addr string, facility int, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "", 0, fmt.Errorf("not an address: %w", err)
	}
	if u.Scheme != "tcp" && u.Scheme != "udp" {
		return "", "", 0, fmt.Errorf("%q: want tcp://HOST:PORT or udp://HOST:PORT", s)
	}
	if u.Host == "" || u.Port() == "" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.Fragment != "" {
		return "", "", 0, fmt.Errorf("%q: want %s://HOST:PORT", s, u.Scheme)
	}
	facility = 16
	for k, v := range u.Query() {
		if k != "facility" || len(v) != 1 {
			return "", "", 0, fmt.Errorf("%q: the only option is facility", s)
		}
		f, ok := facilities[v[0]]
		if !ok {
			return "", "", 0, fmt.Errorf("%q: no facility %q", s, v[0])
		}
		facility = f
	}
	return u.Scheme, u.Host, facility, nil
}

var facilities = map[string]int{"kern": 0, "user": 1, "mail": 2, "daemon": 3, "auth": 4, "syslog": 5, "lpr": 6,
	"news": 7, "uucp": 8, "cron": 9, "authpriv": 10, "ftp": 11, "local0": 16, "local1": 17, "local2": 18,
	"local3": 19, "local4": 20, "local5": 21, "local6": 22, "local7": 23}

// NewSyslog returns a sink to the server at addr over network (tcp or
// udp); it dials at the first batch.
func NewSyslog(network, addr string, facility int) *Syslog {
	host, _ := os.Hostname()
	return &Syslog{network: network, addr: addr,
		header: Header{Facility: facility, Hostname: host, AppName: "veto", ProcID: strconv.Itoa(os.Getpid())}}
}

// Send implements Sink: every message is written to the connection
// (handed to the kernel) before it returns nil. Over UDP that is all
// anyone can know: a datagram may be lost.
func (s *Syslog) Send(ctx context.Context, recs []Record) error {
	if err := s.connect(ctx); err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	s.conn.SetWriteDeadline(deadline)
	for i := range recs {
		s.buf = Format(s.buf[:0], &s.header, &recs[i])
		var err error
		if s.network == "udp" {
			if len(s.buf) > maxDatagram {
				continue // larger than any datagram: counted as sent, never stalls the rest
			}
			_, err = s.conn.Write(s.buf)
		} else {
			s.w.WriteString(strconv.Itoa(len(s.buf)))
			s.w.WriteByte(' ')
			_, err = s.w.Write(s.buf)
		}
		if err != nil {
			s.Close()
			return fmt.Errorf("export: syslog %s: %w", s.addr, err)
		}
	}
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			s.Close()
			return fmt.Errorf("export: syslog %s: %w", s.addr, err)
		}
	}
	return nil
}

// connect dials when there is no connection, or when the server closed
// the one there is: a TCP peer that has gone still accepts the first
// writes, which would be lost.
func (s *Syslog) connect(ctx context.Context) error {
	if s.conn != nil && s.network == "tcp" && closedByPeer(s.conn) {
		s.Close()
	}
	if s.conn != nil {
		return nil
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, s.network, s.addr)
	if err != nil {
		return fmt.Errorf("export: syslog %s: %w", s.addr, err)
	}
	s.conn = c
	if s.network == "tcp" {
		s.w = bufio.NewWriterSize(c, 64<<10)
	}
	return nil
}

// closedByPeer reports whether the server ended the connection: a syslog
// server sends nothing, so a read that does not time out at once means
// the end (or something no syslog server says).
func closedByPeer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	c.SetReadDeadline(time.Time{})
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// Close implements Sink.
func (s *Syslog) Close() error {
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn, s.w = nil, nil
	return err
}
