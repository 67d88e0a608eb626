package command_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/tools"
)

type corpusCase struct {
	Command  string `json:"command"`
	Expected string `json:"expected"`
	Source   string `json:"source"`
}

func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// gate is veto's default gate for shell commands, in a fresh git
// workspace with a fake home.
func gate(t testing.TB) (*veto.Gate, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	// The home directory is outside every root, as a user's is; it need
	// not exist.
	home := "/home/veto-corpus-agent"
	for _, d := range []string{ws + "/.git"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmds, err := command.New(command.Config{Vars: map[string]string{"HOME": home, "TMPDIR": "/tmp", "USER": "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	fileRules, err := files.New(files.Config{Home: home, TempDirs: []string{"/tmp", "/var/tmp"}, Extractors: []veto.PathExtractor{cmds.Paths()}})
	if err != nil {
		t.Fatal(err)
	}
	descs := tools.Defaults()
	g, err := veto.NewGate(veto.Config{
		Tools: descs, Rules: append(cmds.Rules(), fileRules.Rules()...), Resolvers: []veto.Resolver{fileRules.Resolver()},
		Learners: []veto.Learner{fileRules.Learner()}, Probe: probe.Live{}, Store: memstore.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return g, ws
}

func bash(g *veto.Gate, ws, src string) veto.Verdict {
	return g.Decide(context.Background(), &veto.Call{Tool: "Bash", Args: map[string]any{"command": src}, Cwd: ws,
		Run: veto.Run{Ref: "corpus", Fresh: true}})
}

type deviation struct {
	Command  string `json:"command"`
	Expected string `json:"expected"`
	Why      string `json:"why"`
}

// TestCCSafetyNetCorpus runs the 387 verdicts of cc-safety-net's own suite
// through veto's default rules, in a fresh git workspace. Every
// disagreement must be one of the documented deviations, and at least 380
// must agree.
func TestCCSafetyNetCorpus(t *testing.T) {
	g, ws := gate(t)
	cases := readJSONL[corpusCase](t, "testdata/cc-safety-net.jsonl")
	devs := map[string]deviation{}
	for _, d := range readJSONL[deviation](t, "testdata/cc-safety-net-deviations.jsonl") {
		devs[d.Command] = d
	}
	agree, deviated := 0, map[string]bool{}
	for _, c := range cases {
		v := bash(g, ws, c.Command)
		got := "allowed"
		if !v.Allowed {
			got = "blocked"
		}
		if got == c.Expected {
			agree++
			if _, listed := devs[c.Command]; listed {
				t.Errorf("listed as a deviation but agrees: %q", c.Command)
			}
			continue
		}
		deviated[c.Command] = true
		if _, listed := devs[c.Command]; !listed {
			t.Errorf("%s: %q: want %s, veto %s (%s/%s)", c.Source, c.Command, c.Expected, got, v.Rule, v.Reason)
		}
	}
	for cmd := range devs {
		if !deviated[cmd] {
			t.Errorf("deviation %q is not in the corpus or no longer deviates", cmd)
		}
	}
	doc, err := os.ReadFile("../../docs/shell.md")
	if err != nil {
		t.Fatal(err)
	}
	for cmd := range devs {
		if !strings.Contains(string(doc), "`"+cmd+"`") {
			t.Errorf("docs/shell.md does not list the deviation %q", cmd)
		}
	}
	t.Logf("%d of %d agree", agree, len(cases))
	if agree < 380 {
		t.Errorf("%d of %d agree, want at least 380", agree, len(cases))
	}
	_ = fmt.Sprint
}

// BenchmarkBashDecision is a whole decision for a typical Bash call:
// analysis, every command rule, and the file rules on its paths.
func BenchmarkBashDecision(b *testing.B) {
	g, ws := gate(b)
	src := `git add -A && git commit -m "fix: handle empty input" && go test ./... 2>&1 | tail`
	b.ReportAllocs()
	for b.Loop() {
		if v := bash(g, ws, src); !v.Allowed {
			b.Fatal(v.Reason)
		}
	}
}

// BenchmarkBashDecision4KScript decides a 4 KB build-and-deploy script
// (shell/testdata/deploy.sh repeated) through the gate: parse, every
// command's rules, the paths it names, the record.
func BenchmarkBashDecision4KScript(b *testing.B) {
	g, ws := gate(b)
	raw, err := os.ReadFile("../../shell/testdata/deploy.sh")
	if err != nil {
		b.Fatal(err)
	}
	src := strings.Repeat(string(raw), 4096/len(raw))
	src += strings.Repeat("true\n", (4096-len(src))/5+1)
	src = src[:4095] + "\n"
	b.ReportAllocs()
	for b.Loop() {
		// The script writes to /tmp, outside the roots: denied, after
		// every command was analyzed.
		if v := bash(g, ws, src); v.Rule != "file.write_roots" {
			b.Fatalf("%s %s", v.Rule, v.Reason)
		}
	}
}
