package command

import (
	"context"
	"net/netip"
	"strconv"
	"strings"

	"github.com/vetohq/veto"
)

// egress judges every host a command reaches: by default every host is
// allowed but link-local and cloud metadata addresses, and a host veto
// cannot determine statically is refused (it cannot vouch for it).
type egress struct{ s *Set }

func (r *egress) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "shell.egress", Risk: veto.RiskMapping{Default: veto.RiskHigh, ByReason: map[string]veto.Risk{
		"egress_metadata": veto.RiskCritical, "egress_unresolvable": veto.RiskMedium}}}
}

func (r *egress) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	a := r.s.analyze(in)
	if a.report == nil {
		return veto.Allow(), nil
	}
	for _, h := range a.report.Hosts {
		if h.Unknown {
			return veto.Deny("egress_unresolvable", "The command reaches a host veto cannot determine (a variable or an expansion), so it cannot vouch for it."), nil
		}
		if Forbidden(h.Host) {
			return veto.Deny("egress_metadata", "The command reaches a link-local or cloud metadata address, which holds credentials."), nil
		}
	}
	return veto.Allow(), nil
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

// Forbidden reports whether host is link-local or a cloud metadata
// endpoint, however it is spelled: case, trailing dots, brackets, zones,
// IPv4 in decimal, octal, hex or short forms, IPv4-mapped IPv6.
func Forbidden(host string) bool {
	h := strings.ToLower(strings.TrimSpace(host))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimRight(h, ".")
	if metadataNames[h] {
		return true
	}
	addr, ok := parseAddr(h)
	if !ok {
		return false
	}
	addr = addr.Unmap()
	for _, p := range metadataAddrs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func parseAddr(h string) (netip.Addr, bool) {
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
	var nums []uint64
	for _, p := range parts {
		if p == "" {
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
