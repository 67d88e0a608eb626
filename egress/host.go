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
	hostport := s
	if strings.HasPrefix(s, "//") {
		// Scheme-relative: the authority runs to the first / ? or #.
		hostport = s[2:]
		if j := strings.IndexAny(hostport, "/?#"); j >= 0 {
			hostport = hostport[:j]
		}
		if k := strings.LastIndexByte(hostport, '@'); k >= 0 {
			hostport = hostport[k+1:]
		}
	} else if i := strings.Index(s, "://"); i > 0 {
		u, err := url.Parse(s)
		if err == nil {
			hostport = u.Host
		} else {
			rest := s[i+3:]
			if j := strings.IndexAny(rest, "/?#"); j >= 0 {
				rest = rest[:j]
			}
			hostport = rest
		}
		if k := strings.LastIndexByte(hostport, '@'); k >= 0 {
			hostport = hostport[k+1:]
		}
	} else {
		if k := strings.LastIndexByte(hostport, '@'); k >= 0 {
			hostport = hostport[k+1:]
		}
		if j := strings.IndexAny(hostport, "/?#"); j >= 0 && !strings.HasPrefix(hostport, "[") {
			hostport = hostport[:j]
		}
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
	ascii, err := profile.ToASCII(name)
	if err != nil {
		return Host{}, ErrNoHost
	}
	ascii = strings.TrimRight(strings.ToLower(ascii), ".")
	if again, err := profile.ToASCII(ascii); err != nil || again != ascii || !hostName(ascii) {
		// Empty, or holding what no resolver takes: a name veto cannot
		// read is no name, and the caller denies it.
		return Host{}, ErrNoHost
	}
	// A name that maps to an address ("１２７.０.０.１") is that address.
	if a, ok := parseAddr(ascii); ok {
		h.Addr = a.Unmap()
		return h, nil
	}
	h.Name = ascii
	return h, nil
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
