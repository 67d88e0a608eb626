package control

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/shell"
	"github.com/vetohq/veto/toolpath"
)

// address is one place veto answers: a TCP host and port, or a Unix
// socket.
type address struct {
	host, port string // TCP
	socket     string // a Unix socket's path
}

// CheckAddress says what is wrong with an address of the control
// section: host:port, or an absolute socket path.
func CheckAddress(a string) error { _, err := parseAddress(a); return err }

func parseAddress(a string) (address, error) {
	if strings.HasPrefix(a, "/") {
		return address{socket: path.Clean(a)}, nil
	}
	h, p, err := net.SplitHostPort(a)
	if err != nil || p == "" {
		return address{}, fmt.Errorf("address %q is not host:port or an absolute socket path", a)
	}
	if _, err := strconv.ParseUint(p, 10, 16); err != nil {
		return address{}, fmt.Errorf("address %q: the port is not a number", a)
	}
	return address{host: strings.ToLower(h), port: p}, nil
}

// The runtime record of veto's listeners: one file per listener in the
// socket directory, listen-PID-KIND, holding its address, written when it
// listens and removed when it stops. A record whose process is gone is
// ignored.
const recordPrefix = "listen-"

// Listening records that this process (veto serve, veto ui, veto
// serve-hooks; kind names which) listens at addr (host:port, or a
// socket's path), so that veto.control refuses the agent's network tools
// there. It returns the function that removes the record; a record that
// cannot be written is only missing (the policy's control.addresses
// still hold).
func Listening(kind, addr string) (remove func()) {
	dir := SocketDir(nil)
	if os.MkdirAll(dir, 0o700) != nil {
		return func() {}
	}
	pruneRecords(dir)
	name := path.Join(dir, fmt.Sprintf("%s%d-%s", recordPrefix, os.Getpid(), kind))
	if os.WriteFile(name, []byte(addr+"\n"), 0o600) != nil {
		return func() {}
	}
	return func() { os.Remove(name) }
}

// listeners are veto's addresses now: the records of live processes, the
// policy's, and the socket directory itself.
func (s *Set) listeners() []address {
	out := append([]address(nil), s.extra...)
	out = append(out, address{socket: s.records})
	if v := s.getenv("VETO_SOCKET"); strings.HasPrefix(v, "/") {
		out = append(out, address{socket: v})
	}
	ents, err := os.ReadDir(s.records)
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, ok := recordPID(e.Name())
		if !ok || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(path.Join(s.records, e.Name()))
		if err != nil || len(b) > 4096 {
			continue
		}
		if a, err := parseAddress(strings.TrimSpace(string(b))); err == nil {
			out = append(out, a)
		}
	}
	return out
}

func recordPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, recordPrefix)
	if !ok {
		return 0, false
	}
	n, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(n)
	return pid, err == nil && pid > 0
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// dest is one place a call connects to.
type dest struct {
	host, port string // port "" when unknown
	socket     string
	unknown    bool // the host cannot be known
}

// checkEndpoints refuses a call whose URLs or network commands reach one
// of veto's listeners.
func (s *Set) checkEndpoints(in *veto.Input, rep *shell.Report) (veto.Decision, bool) {
	var ds []dest
	if urls, ok := egress.Destinations(in); ok {
		for _, u := range urls {
			ds = append(ds, urlDest(u))
		}
	}
	if rep != nil {
		for _, c := range rep.Commands {
			ds = append(ds, commandDests(c)...)
		}
	}
	if len(ds) == 0 {
		return veto.Decision{}, false
	}
	ls := s.listeners()
	for _, d := range ds {
		for _, l := range ls {
			if what, ok := s.reaches(d, l); ok {
				return vetoEndpoint.Deny(what), true
			}
		}
	}
	return veto.Decision{}, false
}

// reaches says whether d may be l, and how a message names l.
func (s *Set) reaches(d dest, l address) (string, bool) {
	if l.socket != "" {
		if d.socket == "" {
			return "", false
		}
		p, err := toolpath.Resolve(d.socket, s.env("/"))
		if err != nil {
			return "", false
		}
		if p.Any(func(f string) bool { return toolpath.Within(f, l.socket, false) }) || d.socket == l.socket {
			return "veto's socket", true
		}
		return "", false
	}
	if d.unknown || d.socket != "" {
		return "", false
	}
	if d.port != "" && d.port != l.port {
		return "", false
	}
	if d.host == l.host || (loopbackListener(l.host) && maybeLocal(d.host)) {
		return "the address of veto serve or veto ui", true
	}
	return "", false
}

// loopbackListener reports whether a listener answers on this machine's
// loopback (its host is loopback or unspecified).
func loopbackListener(h string) bool {
	if h == "" || h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// maybeLocal reports whether a destination host may be this machine:
// localhost names, loopback and unspecified addresses, this host's name,
// and any spelling of a number veto does not parse (127.1, 0x7f000001,
// 2130706433), which a tool may read as a loopback address.
func maybeLocal(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "" {
		return true
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	if name, err := os.Hostname(); err == nil && strings.EqualFold(h, name) {
		return true
	}
	return strings.Trim(h, "0123456789abcdefx.") == ""
}

// urlDest is where a URL connects.
func urlDest(raw string) dest {
	raw = strings.TrimSpace(raw)
	if path, ok := strings.CutPrefix(raw, "unix:"); ok && path != "" {
		return dest{socket: path} // a connection veto exec decides: unix:PATH
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if !strings.Contains(raw, "://") {
			return hostPortDest(raw, "80")
		}
		return dest{unknown: true}
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https", "wss":
			port = "443"
		case "ftp":
			port = "21"
		default:
			port = "80"
		}
	}
	return dest{host: strings.ToLower(u.Hostname()), port: port}
}

// hostPortDest reads host[:port][/path] with a default port.
func hostPortDest(s, def string) dest {
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if k := strings.LastIndexByte(s, '@'); k >= 0 {
		s = s[k+1:]
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		return dest{host: strings.ToLower(h), port: p}
	}
	return dest{host: strings.ToLower(s), port: def}
}

// netTools are the programs whose words name where they connect.
var netTools = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true, "httpie": true,
	"nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "websocat": true, "grpcurl": true, "wscat": true,
	"lynx": true, "w3m": true, "links": true, "aria2c": true, "openssl": true}

// commandDests are the places a network command's words connect to: its
// URLs, host:port words, nc's host and port, socat's addresses, curl's
// --unix-socket and --connect-to. A word veto cannot know, in a network
// command that names a host, leaves the port unknown.
func commandDests(c shell.Command) []dest {
	prog := programName(c)
	if !netTools[prog] {
		return nil
	}
	var out []dest
	var words []string
	unknown := false
	for _, a := range c.Argv[1:] {
		if a.Unknown {
			unknown = true
			continue
		}
		words = append(words, a.Values...)
	}
	for i, w := range words {
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		switch {
		case w == "--unix-socket" || w == "--abstract-unix-socket" || w == "-U" && isNC(prog):
			out = append(out, dest{socket: next})
		case strings.HasPrefix(w, "--unix-socket="):
			out = append(out, dest{socket: w[len("--unix-socket="):]})
		case isNC(prog) && strings.HasPrefix(w, "/"):
			out = append(out, dest{socket: w}) // nc -U's socket, as a word
		case prog == "socat":
			out = append(out, socatDest(w)...)
		case w == "--connect-to" || w == "--resolve":
			out = append(out, connectTo(next)...)
		case strings.Contains(w, "://"):
			out = append(out, urlDest(w))
		case isNC(prog) || prog == "telnet":
			if _, err := strconv.ParseUint(w, 10, 16); err == nil {
				for _, h := range words {
					if !strings.HasPrefix(h, "-") {
						out = append(out, dest{host: strings.ToLower(h), port: w})
					}
				}
			}
		case !strings.HasPrefix(w, "-") && (prog == "curl" || prog == "wget" || prog == "xh" || prog == "http") && strings.Count(w, ":") == 1 && !strings.Contains(w, " "):
			out = append(out, hostPortDest(w, "80"))
		case w == "-connect" && prog == "openssl":
			out = append(out, hostPortDest(next, "443"))
		}
	}
	if unknown {
		for i := range out {
			if out[i].socket == "" && !out[i].unknown {
				out[i].port = "" // the port may be in a word veto cannot see
			}
		}
		if len(out) == 0 {
			out = append(out, dest{unknown: true})
		}
	}
	return out
}

func isNC(prog string) bool { return prog == "nc" || prog == "ncat" || prog == "netcat" }

// socatDest reads socat's TCP:host:port, TCP4-CONNECT:host:port and
// UNIX-CONNECT:path addresses.
func socatDest(w string) []dest {
	kind, rest, ok := strings.Cut(w, ":")
	if !ok {
		return nil
	}
	kind = strings.ToUpper(kind)
	rest, _, _ = strings.Cut(rest, ",")
	switch {
	case strings.HasPrefix(kind, "UNIX"), kind == "ABSTRACT-CONNECT", kind == "ABSTRACT-CLIENT":
		return []dest{{socket: rest}}
	case strings.HasPrefix(kind, "TCP"), strings.HasPrefix(kind, "SSL"), strings.HasPrefix(kind, "OPENSSL"):
		return []dest{hostPortDest(rest, "")}
	}
	return nil
}

// connectTo reads curl's --connect-to HOST:PORT:HOST2:PORT2 and --resolve
// HOST:PORT:ADDR: the second half is where curl connects.
func connectTo(v string) []dest {
	parts := strings.Split(v, ":")
	switch len(parts) {
	case 4:
		return []dest{{host: strings.ToLower(parts[2]), port: parts[3]}}
	case 3:
		return []dest{{host: strings.ToLower(parts[2]), port: parts[1]}}
	}
	return nil
}

// The runtime records of the files veto's long-lived processes hold: in
// the socket directory, a path a line. policy-PID-KIND names the policy
// files a running veto serve or veto mcp reloads: an edit of one would be
// in force within a second, so while it runs each is one of veto's policy
// files, wherever it lies. secret-PID-KIND names a key it signs with:
// neither read nor written by the agent.
const (
	policyPrefix = "policy-"
	secretPrefix = "secret-"
)

// Reloading records that this process (kind names it) reloads the policy
// files at paths as they change, so that veto.control refuses the agent's
// writes of them; it returns the function that removes the record.
func Reloading(kind string, paths ...string) (remove func()) {
	return record(policyPrefix, kind, paths)
}

// Holding records that this process holds the secret files at paths (a
// signing key), so that veto.control refuses the agent's reads and writes
// of them; it returns the function that removes the record.
func Holding(kind string, paths ...string) (remove func()) { return record(secretPrefix, kind, paths) }

func record(prefix, kind string, paths []string) func() {
	var b strings.Builder
	for _, p := range paths {
		if strings.HasPrefix(p, "/") && !strings.ContainsAny(p, "\n\x00") {
			b.WriteString(path.Clean(p) + "\n")
		}
	}
	if b.Len() == 0 {
		return func() {}
	}
	dir := SocketDir(nil)
	if os.MkdirAll(dir, 0o700) != nil {
		return func() {}
	}
	pruneRecords(dir)
	name := path.Join(dir, fmt.Sprintf("%s%d-%s", prefix, os.Getpid(), kind))
	if os.WriteFile(name, []byte(b.String()), 0o600) != nil {
		return func() {}
	}
	return func() { os.Remove(name) }
}

// recorded are the files live processes' records name: the policy files
// they reload and the secrets they hold, canonical. The socket directory is
// read again only when it changed (a record written or removed: its
// modification time moves) or a second went by (a process may have died),
// so a call costs one stat of it, not a read of every record.
func (s *Set) recorded() (policies, secrets []string) {
	fi, err := os.Stat(s.records)
	if err != nil {
		return nil, nil
	}
	key := fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
	now := time.Now()
	s.recMu.Lock()
	defer s.recMu.Unlock()
	if s.recKey == key && now.Sub(s.recAt) < time.Second {
		return s.recPolicy, s.recSecret
	}
	s.recKey, s.recAt, s.recPolicy, s.recSecret = key, now, nil, nil
	ents, err := os.ReadDir(s.records)
	if err != nil {
		return nil, nil
	}
	for _, e := range ents {
		name := e.Name()
		var into *[]string
		switch {
		case strings.HasPrefix(name, policyPrefix):
			into, name = &s.recPolicy, name[len(policyPrefix):]
		case strings.HasPrefix(name, secretPrefix):
			into, name = &s.recSecret, name[len(secretPrefix):]
		default:
			continue
		}
		n, _, _ := strings.Cut(name, "-")
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(path.Join(s.records, e.Name()))
		if err != nil || len(b) > 64<<10 {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.HasPrefix(line, "/") {
				continue
			}
			if p, err := toolpath.Resolve(line, s.env("/")); err == nil {
				*into = append(*into, p.Forms()...)
			}
		}
	}
	return s.recPolicy, s.recSecret
}

// pruneRecords removes the records of processes that are gone (killed
// before they could remove their own), so the directory stays small.
func pruneRecords(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest := ""
		for _, p := range []string{recordPrefix, policyPrefix, secretPrefix} {
			if r, ok := strings.CutPrefix(e.Name(), p); ok {
				rest = r
			}
		}
		n, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 && !alive(pid) {
			os.Remove(path.Join(dir, e.Name()))
		}
	}
}
