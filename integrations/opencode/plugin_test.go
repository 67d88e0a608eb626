package ocplugin

import (
	"bytes"
	"reflect"
	"testing"
)

// TestInstalledRoundTrips: init's copy is the source with one line
// changed, holding the configuration; it is veto's, and a file that is
// not stays not.
func TestInstalledRoundTrips(t *testing.T) {
	if !IsVeto(Source) {
		t.Fatal("the source is not recognised as veto's plugin")
	}
	if c, ok := ConfigOf(Source); !ok || !reflect.DeepEqual(c, Config{}) {
		t.Fatalf("the source's configuration is %+v, %v; want empty", c, ok)
	}
	cfg := Config{Hook: []string{"/opt/veto dir/veto-hook", "opencode"}, TimeoutMs: 5000}
	b, err := Installed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !IsVeto(b) {
		t.Fatal("the installed copy is not recognised")
	}
	if c, ok := ConfigOf(b); !ok || !reflect.DeepEqual(c, cfg) {
		t.Fatalf("ConfigOf = %+v, %v; want %+v", c, ok, cfg)
	}
	if n := len(bytes.Split(b, []byte("\n"))); n != len(bytes.Split(Source, []byte("\n"))) {
		t.Fatalf("the copy has %d lines, the source another number", n)
	}
	for _, other := range []string{"", "export default async function () { return {} }\n", "// veto's guard for OpenCode (npm opencode-ai)\nconst x = 1;\n"} {
		if IsVeto([]byte(other)) {
			t.Errorf("%q is taken for veto's plugin", other)
		}
	}
}
