package egress

import (
	"fmt"
	"net/netip"
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
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local, AWS/GCP/Azure metadata
	netip.MustParsePrefix("fe80::/10"),          // link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS metadata over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure wire server
	netip.MustParsePrefix("192.0.0.192/32"),     // Oracle Cloud metadata
}

// Forbidden reports whether h is link-local or a cloud metadata endpoint:
// refused in every mode.
func Forbidden(h Host) bool {
	if h.Addr.IsValid() {
		for _, p := range metadataAddrs {
			if p.Contains(h.Addr) {
				return true
			}
		}
		return false
	}
	return metadataNames[h.Name]
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
