package egress

import (
	"context"
	"net/netip"
	"strings"

	"github.com/vetohq/veto"
)

// Registries are the package ecosystems' own registry hosts (PyPI, npm,
// crates.io, RubyGems, the Go module proxy), which shell.install and
// file.package_config always let a package manager install from.
var Registries = []string{
	"pypi.org", "files.pythonhosted.org", "pypi.python.org",
	"registry.npmjs.org", "registry.yarnpkg.com", "registry.npmjs.com",
	"crates.io", "index.crates.io", "static.crates.io",
	"rubygems.org", "index.rubygems.org",
	"proxy.golang.org", "sum.golang.org",
}

var registryList = func() List {
	l, err := ParseList(Registries)
	if err != nil {
		panic(err)
	}
	return l
}()

// Lists reports whether host is on the part of the allow-list that may
// receive what a call sends (Sends, and the hosts a person added to the
// run), whatever the mode, or on this machine (a loopback address,
// localhost): the test shell.upload and shell.install apply in every mode.
// With registries, the ecosystems' registries count as listed. "" is a
// host veto could not determine, never listed.
func (p Policy) Lists(ctx context.Context, in *veto.Input, host string, registries bool) (bool, error) {
	if host == "" {
		return false, nil
	}
	h, err := Parse(host)
	if err != nil {
		return false, nil
	}
	if Local(h) || (registries && registryList.Allows(h)) {
		return true, nil
	}
	v, err := Policy{Mode: Allowlist, Allow: p.Sends}.Check(ctx, in, []string{host})
	return v == Allowed, err
}

// Local reports whether h is this machine: a loopback address or
// localhost. Data sent there does not leave it.
func Local(h Host) bool {
	if h.Addr.IsValid() {
		return h.Addr.IsLoopback() || h.Addr == netip.IPv6Loopback()
	}
	return h.Name == "localhost" || strings.HasSuffix(h.Name, ".localhost")
}
