package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Mode is how the egress rule judges a host.
type Mode string

// The modes.
const (
	// Open allows every host but link-local and cloud metadata addresses.
	Open Mode = "open"
	// Allowlist allows only listed hosts; a host veto cannot determine
	// statically is refused.
	Allowlist Mode = "allowlist"
)

// List is an allow-list: host names, wildcard domains ("*.example.com":
// any name below example.com, not example.com itself), addresses and CIDR
// ranges, each optionally with a port ("api.example.com:443").
type List struct {
	entries []entry
}

type entry struct {
	name     string // exact name, or the suffix after "*."
	wildcard bool
	prefix   netip.Prefix
	port     int
}

// ParseList reads an allow-list, naming the first entry it cannot read.
func ParseList(items []string) (List, error) {
	var l List
	for _, it := range items {
		e, err := parseEntry(it)
		if err != nil {
			return List{}, fmt.Errorf("egress allow-list entry %q: %w", it, err)
		}
		l.entries = append(l.entries, e)
	}
	return l, nil
}

func parseEntry(s string) (entry, error) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return entry{prefix: p.Masked()}, nil
	}
	var e entry
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		e.wildcard = true
		s = rest
	}
	h, err := Parse(s)
	if err != nil {
		return entry{}, err
	}
	e.port = h.Port
	if h.Addr.IsValid() {
		if e.wildcard {
			return entry{}, fmt.Errorf("a wildcard needs a domain")
		}
		e.prefix = netip.PrefixFrom(h.Addr, h.Addr.BitLen())
		return e, nil
	}
	if h.Name == "" || strings.ContainsAny(h.Name, "*/ ") {
		return entry{}, fmt.Errorf("not a host name")
	}
	e.name = h.Name
	return e, nil
}

// Add returns the list with one more host, as an allow event adds it.
func (l List) Add(host string) List {
	e, err := parseEntry(host)
	if err != nil {
		return l
	}
	out := List{entries: append(append([]entry(nil), l.entries...), e)}
	return out
}

// Allows reports whether h is on the list.
func (l List) Allows(h Host) bool {
	for _, e := range l.entries {
		if e.port != 0 && e.port != h.Port {
			continue
		}
		switch {
		case e.prefix.IsValid():
			if h.Addr.IsValid() && e.prefix.Contains(h.Addr) {
				return true
			}
		case e.wildcard:
			if strings.HasSuffix(h.Name, "."+e.name) {
				return true
			}
		default:
			if h.Name == e.name {
				return true
			}
		}
	}
	return false
}

var metadataNames = map[string]bool{"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
	"instance-data": true, "instance-data.ec2.internal": true, "metadata.azure.com": true, "metadata.packet.net": true}

var metadataAddrs = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),         // link-local, AWS/GCP/Azure metadata
	netip.MustParsePrefix("fe80::/10"),              // link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),      // AWS metadata over IPv6
	netip.MustParsePrefix("100.100.100.200/32"),     // Alibaba Cloud metadata
	netip.MustParsePrefix("168.63.129.16/32"),       // Azure wire server
	netip.MustParsePrefix("192.0.0.192/32"),         // Oracle Cloud metadata
	netip.MustParsePrefix("fd20:ce::254/128"),       // GCP metadata over IPv6
	netip.MustParsePrefix("fd00:c1::a9fe:a9fe/128"), // Oracle Cloud metadata over IPv6
}

// Forbidden reports whether h is link-local or a cloud metadata endpoint:
// refused in every mode.
func Forbidden(h Host) bool {
	if h.Addr.IsValid() {
		return forbiddenAddr(h.Addr)
	}
	if metadataNames[h.Name] {
		return true
	}
	if a, ok := SpelledAddr(h.Name); ok {
		return forbiddenAddr(a)
	}
	return false
}

func forbiddenAddr(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range metadataAddrs {
		if p.Contains(a) {
			return true
		}
	}
	if v4, ok := embeddedV4(a); ok {
		return forbiddenAddr(v4)
	}
	return false
}

// Prefixes of IPv6 addresses that carry an IPv4 address a packet reaches
// through a translator or tunnel.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")   // NAT64, well-known prefix
	nat64l    = netip.MustParsePrefix("64:ff9b:1::/48") // NAT64, local use
	sixToFour = netip.MustParsePrefix("2002::/16")      // 6to4: 2002:VVVV:VVVV::
	compat    = netip.MustParsePrefix("::/96")          // IPv4-compatible (deprecated), ::a.b.c.d
)

// embeddedV4 is the IPv4 address an IPv6 address carries: NAT64's last 32
// bits, 6to4's bits 16 to 48, IPv4-compatible's last 32 bits.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), nat64l.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case compat.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	}
	return netip.Addr{}, false
}

// spellingDomains are the wildcard DNS services whose names resolve to
// the address they spell: 10.0.0.1.nip.io, app-10-0-0-1.sslip.io,
// 0a000001.nip.io, fd00-ec2--254.sslip.io.
var spellingDomains = []string{"nip.io", "sslip.io", "xip.io", "traefik.me", "localtest.me", "lvh.me", "vcap.me", "localho.st"}

// loopbackDomains resolve, with every name below them, to 127.0.0.1.
var loopbackDomains = map[string]bool{"localtest.me": true, "lvh.me": true, "vcap.me": true, "localho.st": true}

// SpelledAddr is the address a name under a wildcard DNS service spells
// (its dotted, dashed or hex form), or the loopback address of a
// loopback domain; ok is false for any other name.
func SpelledAddr(name string) (netip.Addr, bool) {
	for _, d := range spellingDomains {
		if name != d && !strings.HasSuffix(name, "."+d) {
			continue
		}
		if loopbackDomains[d] {
			return netip.AddrFrom4([4]byte{127, 0, 0, 1}), true
		}
		rest := strings.TrimSuffix(strings.TrimSuffix(name, d), ".")
		if rest == "" {
			return netip.Addr{}, false
		}
		labels := strings.Split(rest, ".")
		// Dotted: the last four labels before the domain.
		if len(labels) >= 4 {
			if a, err := netip.ParseAddr(strings.Join(labels[len(labels)-4:], ".")); err == nil {
				return a, true
			}
		}
		last := labels[len(labels)-1]
		// Dashed IPv4: the last four dash-separated parts of the last label.
		if parts := strings.Split(last, "-"); len(parts) >= 4 {
			if a, err := netip.ParseAddr(strings.Join(parts[len(parts)-4:], ".")); err == nil {
				return a, true
			}
		}
		// Dashed IPv6 (sslip.io): dashes for colons.
		if strings.Contains(last, "--") || strings.Count(last, "-") >= 2 {
			if a, err := netip.ParseAddr(strings.ReplaceAll(last, "-", ":")); err == nil && a.Is6() {
				return a, true
			}
		}
		// Hex: eight hex digits, alone or after a dash.
		hex := last
		if i := strings.LastIndexByte(hex, '-'); i >= 0 {
			hex = hex[i+1:]
		}
		if len(hex) == 8 {
			if n, err := strconv.ParseUint(hex, 16, 32); err == nil {
				return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
			}
		}
		return netip.Addr{}, false
	}
	return netip.Addr{}, false
}

// Verdict is the egress judgement of one destination.
type Verdict int

// The verdicts.
const (
	Allowed Verdict = iota
	Metadata
	NotListed
	Unresolvable
)

// Judge judges a destination written as raw (a URL or host; "" when veto
// could not determine it) in a mode, against a list.
func Judge(raw string, known bool, mode Mode, l List) Verdict {
	if !known {
		return Unresolvable // in either mode: an unknown host may be a metadata address
	}
	h, err := Parse(raw)
	if err != nil {
		return Unresolvable
	}
	if Forbidden(h) {
		return Metadata
	}
	if mode == Allowlist && !l.Allows(h) {
		return NotListed
	}
	return Allowed
}

// Key is the normalised form a host is recorded under (in an allow event).
func Key(raw string) (string, error) {
	h, err := Parse(raw)
	if err != nil {
		return "", err
	}
	h.Port = 0
	return h.String(), nil
}
