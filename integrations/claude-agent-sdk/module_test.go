package sdkmodule

import (
	"bytes"
	"reflect"
	"testing"

	piext "github.com/vetohq/veto/integrations/pi"
)

// TestInstalledRoundTrips: init's copy is the source with one line
// changed, holding the configuration; it is veto's, and a file that is
// not (pi's extension among them) stays not.
func TestInstalledRoundTrips(t *testing.T) {
	if !IsVeto(Source) {
		t.Fatal("the source is not recognised as veto's module")
	}
	if c, ok := ConfigOf(Source); !ok || !reflect.DeepEqual(c, Config{}) {
		t.Fatalf("the source's configuration is %+v, %v; want empty", c, ok)
	}
	for _, cfg := range []Config{
		{Hook: []string{"/opt/veto dir/veto-hook", "claude-agent-sdk"}, TimeoutMs: 5000},
		{URL: "http://127.0.0.1:8182", TokenFile: "/home/dev/.config/veto/tokens/claude-agent-sdk.token", TimeoutMs: 5000},
	} {
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
		// The configuration is pi's too (veto doctor reads either).
		if piext.Config(cfg).URL != cfg.URL {
			t.Fatal("the configurations differ")
		}
	}
	for _, other := range [][]byte{nil, []byte("export function withVeto() {}\n"), []byte(Header + "\nconst x = 1;\n"), piext.Source} {
		if IsVeto(other) {
			t.Errorf("%.60q is taken for veto's module", other)
		}
	}
	if piext.IsVeto(Source) {
		t.Error("pi takes the SDK's module for its extension")
	}
}
