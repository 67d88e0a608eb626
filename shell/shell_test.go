package shell_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
	"mvdan.cc/sh/v3/syntax"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var env = shell.Env{Cwd: "/work/ws", Vars: map[string]string{"HOME": "/home/agent", "TMPDIR": "/tmp", "USER": "agent"}}

// TestGolden analyses long real-world commands and compares every fact and
// finding with testdata/golden/*.golden. Run with -update to rewrite.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/golden/*.sh")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(shell.Analyze(string(src), env), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(in, ".sh") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if string(got) != string(want) {
				t.Fatalf("report changed:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestFactsOfAccessesAndHosts(t *testing.T) {
	for _, tc := range []struct {
		src   string
		files []shell.Access
		hosts []string
	}{
		{"cat a.txt > out.txt", []shell.Access{{Path: "out.txt", Dir: "/work/ws", Write: true}, {Path: "a.txt", Dir: "/work/ws"}}, nil},
		{"cd /srv && cp a b", []shell.Access{{Path: "a", Dir: "/srv", Segment: 1}, {Path: "b", Dir: "/srv", Write: true, Segment: 1}}, nil},
		{"rm -rf build", []shell.Access{{Path: "build", Dir: "/work/ws", Write: true, Removes: true}}, nil},
		{"TMPDIR=/x rm -r $TMPDIR/y", []shell.Access{{Path: "/tmp/y", Dir: "/work/ws", Write: true}, {Path: "/x/y", Dir: "/work/ws", Write: true}}, nil},
		{"echo x 2>/dev/null >&2", nil, nil},
		{"curl -o /tmp/x https://example.com/a", []shell.Access{{Path: "/tmp/x", Dir: "/work/ws", Write: true}}, []string{"example.com"}},
		{"git clone git@github.com:org/repo.git", nil, []string{"github.com"}},
		{"scp f user@host.example:/tmp/", []shell.Access{{Path: "f", Dir: "/work/ws"}}, []string{"host.example"}},
	} {
		r := shell.Analyze(tc.src, env)
		if !reflect.DeepEqual(r.Files, tc.files) {
			t.Errorf("%q files:\n%+v\nwant\n%+v", tc.src, r.Files, tc.files)
		}
		var hosts []string
		for _, h := range r.Hosts {
			hosts = append(hosts, h.Host)
		}
		if !reflect.DeepEqual(hosts, tc.hosts) {
			t.Errorf("%q hosts %v, want %v", tc.src, hosts, tc.hosts)
		}
	}
}

// FuzzAnalyze: no panic, the same report twice, and input that does not
// parse is never without a finding that refuses it.
func FuzzAnalyze(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/golden/*.sh")
	for _, in := range inputs {
		b, _ := os.ReadFile(in)
		f.Add(string(b))
	}
	for _, s := range []string{"git reset --hard", "echo 'x", "a | b && c; d &", "$(x) y", "f() { f; }; f", "cd /; rm -rf *",
		"xargs -I{} sh -c {}", "parallel ::: 'rm -rf /'", "find . -exec rm -rf {} +", "env -S'a b' c", "bash -c \"bash -c 'x'\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		r1 := shell.Analyze(src, env)
		r2 := shell.Analyze(src, env)
		if !reflect.DeepEqual(r1, r2) {
			t.Fatalf("two analyses differ:\n%+v\n%+v", r1, r2)
		}
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), ""); err != nil && !r1.Recovered {
			for _, fd := range r1.Findings {
				if fd.Rule == shell.RuleAnalyzer {
					return
				}
			}
			t.Fatalf("input that does not parse has no refusing finding: %+v", r1.Findings)
		}
	})
}
