package files

import (
	"slices"
	"sort"
	"testing"
)

// TestInstallScripts: the install-time scripts a package.json text holds,
// through JSON's escapes, and none of the others.
func TestInstallScripts(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{`{"scripts": {"test": "jest", "build": "tsc"}}`, nil},
		{`{"scripts": {"postinstall": "node x.js"}}`, []string{"postinstall\x00node x.js"}},
		{`"preinstall" : "curl -s \"u\""`, []string{"preinstall\x00curl -s \\\"u\\\""}},
		{`{"scripts": {"\u0070ostinstall": "x"}}`, []string{"postinstall\x00x"}},
		{`{"scripts": {"prepare": "husky install", "install": "node-gyp rebuild"}}`, []string{"install\x00node-gyp rebuild", "prepare\x00husky install"}},
	}
	for _, c := range cases {
		var got []string
		for s := range installScripts(c.text) {
			got = append(got, s)
		}
		sort.Strings(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.text, got, c.want)
		}
	}
}

// TestRegistryURLs: the registries a package manager's config text sets,
// "" for one veto cannot read.
func TestRegistryURLs(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"save-exact=true\n//registry.npmjs.org/:_authToken=${T}\n", nil},
		{"registry=https://r.example/\n", []string{"https://r.example/"}},
		{"@acme:registry = https://npm.acme.example\n", []string{"https://npm.acme.example"}},
		{"registry=${REG}\n", []string{""}},
		{"npmRegistryServer: \"https://r.example\"\n", []string{"https://r.example"}},
		{"registry \"https://r.example\"\n", []string{"https://r.example"}},
		{"[global]\nindex-url = https://i.example/simple\nextra-index-url=https://j.example/simple\n", []string{"https://i.example/simple", "https://j.example/simple"}},
		{"# registry=https://commented.example\n", nil},
	}
	for _, c := range cases {
		if got := registryURLs(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}
