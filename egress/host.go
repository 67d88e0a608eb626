// Package egress is veto's one reading of where a call goes: a URL or host
// parser that every source shares (WebFetch's url, MCP fetch tools, URLs
// sniffed from unknown tools, the hosts of shell commands), and the
// allow-list they are judged against. Decisions are by name: nothing here
// looks a name up in DNS.
package egress

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Host is a destination, normalised: a lower-case ASCII name (IDNA to
// punycode, no trailing dot) or an address, and a port when one was given.
type Host struct {
	Name string     // "" when the host is an address
	Addr netip.Addr // valid when the host is an address, however it was spelled
	Port int        // 0 when none was given
}

func (h Host) String() string {
	s := h.Name
	if h.Addr.IsValid() {
		s = h.Addr.String()
		if h.Addr.Is6() {
			s = "[" + s + "]"
		}
	}
	if h.Port != 0 {
		s += ":" + strconv.Itoa(h.Port)
	}
	return s
}

// ErrNoHost is the error of input that names no host veto can read.
var ErrNoHost = errors.New("egress: no host")

var profile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// Parse reads a URL ("https://user@host:443/p"), "user@host:path", a
// "host:port", or a bare host name or address. The host is the one a
// client would connect to: after userinfo ("https://a.example@b.example/"
// goes to b.example), with IDNA mapped, case folded, trailing dots
// dropped, IPv4 in decimal, octal, hex or short form read as the address,
// brackets and zones taken off IPv6, IPv4-mapped IPv6 unmapped.
func Parse(raw string) (Host, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Host{}, ErrNoHost
	}
	hostport, ok := authority(s)
	if !ok {
		hostport = s
		if k := strings.LastIndexByte(hostport, '@'); k >= 0 {
			hostport = hostport[k+1:]
		}
		if j := strings.IndexAny(hostport, "/\\?#"); j >= 0 && !strings.HasPrefix(hostport, "[") {
			hostport = hostport[:j]
		}
	}
	if strings.Contains(hostport, "%") && !strings.HasPrefix(hostport, "[") && strings.Count(hostport, ":") < 2 {
		// Clients percent-decode the host before they look it up.
		dec, err := url.PathUnescape(hostport)
		if err != nil {
			return Host{}, ErrNoHost
		}
		hostport = dec
	}
	host, port := splitPort(hostport)
	if host == "" {
		return Host{}, ErrNoHost
	}
	h := Host{Port: port}
	if a, ok := parseAddr(host); ok {
		h.Addr = a.Unmap()
		return h, nil
	}
	name := strings.TrimRight(host, ".")
	ascii := strings.ToLower(name)
	if !plainName(ascii) {
		// Unicode, punycode or odd bytes: IDNA maps them, and a name that
		// does not map to itself again is refused.
		m, err := profile.ToASCII(name)
		if err != nil {
			return Host{}, ErrNoHost
		}
		ascii = strings.TrimRight(strings.ToLower(m), ".")
		if again, err := profile.ToASCII(ascii); err != nil || again != ascii || !hostName(ascii) {
			// Empty, or holding what no resolver takes: a name veto cannot
			// read is no name, and the caller denies it.
			return Host{}, ErrNoHost
		}
	}
	// A name that maps to an address ("１２７.０.０.１") is that address.
	if a, ok := parseAddr(ascii); ok {
		h.Addr = a.Unmap()
		return h, nil
	}
	h.Name = ascii
	return h, nil
}

// special are the schemes WHATWG URL parsers (browsers, Node's fetch)
// treat specially: any run of slashes and backslashes may follow the colon,
// and a backslash ends the authority as a slash does.
var special = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// authority returns the userinfo-free host[:port] of a URL with a scheme
// or of a scheme-relative one ("//host/p"), reading it as the client that
// connects would. ok is false for input that is not such a URL.
func authority(s string) (string, bool) {
	var rest string
	switch {
	case strings.HasPrefix(s, "//") || strings.HasPrefix(s, "\\\\"):
		rest = strings.TrimLeft(s, "/\\")
	default:
		i := strings.IndexByte(s, ':')
		if i <= 0 || !isScheme(s[:i]) {
			return "", false
		}
		scheme, after := strings.ToLower(s[:i]), s[i+1:]
		switch {
		case special[scheme]:
			rest = strings.TrimLeft(after, "/\\")
		case strings.HasPrefix(after, "//"):
			rest = after[2:]
		default:
			return "", false
		}
	}
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if strings.Contains(rest, "\\") {
		// WHATWG clients end the host at a backslash; curl and others
		// take it as part of the userinfo. Clients disagree on where
		// such a URL goes, so it goes nowhere veto can vouch for.
		return "", true
	}
	if k := strings.LastIndexByte(rest, '@'); k >= 0 {
		rest = rest[k+1:]
	}
	return rest, true
}

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// splitPort splits "host:port", "[v6]:port", "[v6]" and bare IPv6.
func splitPort(s string) (string, int) {
	if strings.HasPrefix(s, "[") {
		j := strings.IndexByte(s, ']')
		if j < 0 {
			return strings.Trim(s, "[]"), 0
		}
		host, rest := s[1:j], s[j+1:]
		if p, ok := strings.CutPrefix(rest, ":"); ok {
			n, _ := strconv.Atoi(p)
			return host, n
		}
		return host, 0
	}
	if strings.Count(s, ":") > 1 {
		return s, 0 // a bare IPv6 address
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return s[:i], 0
		}
		return s[:i], n
	}
	return s, 0
}

func parseAddr(h string) (netip.Addr, bool) {
	h = strings.TrimRight(h, ".")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // an IPv6 zone
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return parseLooseIPv4(h)
}

// parseLooseIPv4 reads the IPv4 spellings inet_aton accepts: 1 to 4 parts,
// each decimal, octal (leading 0) or hex (0x), the last filling the rest.
func parseLooseIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, 0, len(parts))
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, "_") {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*uint(i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-uint(len(nums)))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// hostName reports whether s is a non-empty run of the bytes a DNS name
// (with the underscores real names carry) is made of.
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// plainName reports whether s is lower-case LDH labels, none empty, none
// punycode, none starting or ending with a hyphen: a name IDNA maps to
// itself, so the mapping can be skipped.
func plainName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
			continue
		}
		l := s[start:i]
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || (len(l) >= 4 && l[2] == '-' && l[3] == '-') {
			return false
		}
		start = i + 1
	}
	return true
}
