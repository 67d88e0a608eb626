// Package policytest merges policy files for the tests of the rules
// families' policy sections. It is for tests only.
package policytest

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
)

// Merge merges the built-in layer and files of the given kinds, in order
// (each a kind and its YAML).
func Merge(t testing.TB, files ...string) (*policy.Policy, error) {
	t.Helper()
	layers := []*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}
	for i := 0; i < len(files); i += 2 {
		l, err := policy.Parse(files[i], files[i]+".yaml", []byte(files[i+1]))
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	return policy.Merge(layers, c)
}

// Shows reports whether the policy's explanation names key = value from
// the file of kind.
func Shows(p *policy.Policy, key, value, kind string) bool {
	for _, line := range p.Show() {
		if strings.HasPrefix(line, key+": "+value+" ") && strings.Contains(line, kind+".yaml") {
			return true
		}
	}
	return false
}
