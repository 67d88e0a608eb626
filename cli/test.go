package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
)

const testDescription = `Run policy test cases: files of calls and the verdicts they must get.

Every *.yaml file below DIR (default testdata/policies) holds an optional policy (applied
as --policy would be, over the built-in default) and cases:

  policy: |
    rules:
      - id: no-force-push
        match: {tool: Bash}
        deny: 'args.command.contains("--force")'
        reason: force_push
  cases:
    - name: a force push is refused
      files: {src/main.go: "package main\n"}     # created in the workspace
      before:                                    # calls the run made first
        - call: {tool: Read, args: {file_path: src/main.go}}
          outcome: succeeded
        - change: {path: src/main.go, content: "package changed\n"}
      call: {tool: Bash, args: {command: git push --force}}
      want: {verdict: deny, rule: no-force-push, reason: force_push}

Each case runs in a fresh git workspace ($WORKSPACE, the cwd), with a home ($HOME) and a
temporary root ($SCRATCH) of its own; the three are expanded in argument strings.
Prints a line per failure and a summary; exit status 1 when a case fails.`

type testFile struct {
	Policy string     `yaml:"policy"`
	Cases  []testCase `yaml:"cases"`
}

type testCase struct {
	Name   string            `yaml:"name"`
	Files  map[string]string `yaml:"files"`
	Before []testStep        `yaml:"before"`
	Call   map[string]any    `yaml:"call"`
	Want   testWant          `yaml:"want"`
}

type testStep struct {
	Call    map[string]any `yaml:"call"`
	Outcome string         `yaml:"outcome"`
	Change  *struct {
		Path    string `yaml:"path"`
		Content string `yaml:"content"`
	} `yaml:"change"`
}

type testWant struct {
	Verdict string `yaml:"verdict"`
	Rule    string `yaml:"rule"`
	Reason  string `yaml:"reason"`
}

func runTest(ctx context.Context, e *env, args []string) int {
	fset := newFlags(e, "test", "[--run PATTERN] [-v] [DIR]", testDescription)
	pattern := fset.String("run", "", "run only the cases whose file/name matches this regular expression")
	verbose := fset.Bool("v", false, "print a line for every case")
	if code, done := parse(e, fset, args); done {
		return code
	}
	dir := "testdata/policies"
	switch fset.NArg() {
	case 0:
	case 1:
		dir = fset.Arg(0)
	default:
		fmt.Fprintln(e.stderr, "veto test: give at most one directory")
		return ExitUsage
	}
	var re *regexp.Regexp
	if *pattern != "" {
		var err error
		if re, err = regexp.Compile(*pattern); err != nil {
			fmt.Fprintf(e.stderr, "veto test: --run: %v\n", err)
			return ExitUsage
		}
	}
	paths, err := testFiles(dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto test: %v\n", err)
		return ExitUsage
	}
	passed, failed := 0, 0
	for _, p := range paths {
		tf, err := readTestFile(p)
		if err != nil {
			fmt.Fprintf(e.stdout, "FAIL  %s: %v\n", p, err)
			failed++
			continue
		}
		for i, tc := range tf.Cases {
			name := tc.Name
			if name == "" {
				name = fmt.Sprintf("case %d", i+1)
			}
			full := p + "/" + name
			if re != nil && !re.MatchString(full) {
				continue
			}
			if msg := runCase(ctx, p, tf.Policy, tc); msg != "" {
				fmt.Fprintf(e.stdout, "FAIL  %s: %s: %s\n", p, name, msg)
				failed++
				continue
			}
			passed++
			if *verbose {
				fmt.Fprintf(e.stdout, "ok    %s: %s\n", p, name)
			}
		}
	}
	fmt.Fprintf(e.stdout, "%d case(s): %d passed, %d failed\n", passed+failed, passed, failed)
	if failed > 0 {
		return ExitDeny
	}
	return ExitAllow
}

// testFiles returns the *.yaml files below dir, sorted.
func testFiles(dir string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.yaml test files in %s", dir)
	}
	slices.Sort(paths)
	return paths, nil
}

func readTestFile(p string) (*testFile, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var tf testFile
	if err := dec.Decode(&tf); err != nil {
		return nil, fmt.Errorf("not a test file: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(tf.Cases) == 0 {
		return nil, fmt.Errorf("no cases")
	}
	return &tf, nil
}

// runCase runs one case in a world of its own and returns what went
// wrong, or "".
func runCase(ctx context.Context, file, policyText string, tc testCase) string {
	v, msg := decideCase(ctx, file, policyText, nil, tc)
	if msg != "" {
		return msg
	}
	got := "allow"
	switch {
	case v.Ask:
		got = "ask"
	case !v.Allowed:
		got = "deny"
	}
	want := tc.Want
	if want.Verdict != "allow" && want.Verdict != "deny" && want.Verdict != "ask" {
		return "want.verdict must be allow, deny or ask"
	}
	if got != want.Verdict || (want.Rule != "" && v.Rule != want.Rule) || (want.Reason != "" && v.Reason != want.Reason) {
		return fmt.Sprintf("want %s, got %s", describe(want.Verdict, want.Rule, want.Reason), describe(got, v.Rule, v.Reason))
	}
	return ""
}

// decideCase decides a case's call in a world of its own, under the
// built-in policy, the case file's policy and extra (when not nil). A
// non-empty message says why it could not.
func decideCase(ctx context.Context, file, policyText string, extra *policy.Layer, tc testCase) (veto.Verdict, string) {
	fail := func(msg string) (veto.Verdict, string) { return veto.Verdict{}, msg }
	root, err := os.MkdirTemp("", "veto-test-")
	if err != nil {
		return fail(err.Error())
	}
	defer os.RemoveAll(root)
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return fail(err.Error())
	}
	ws, home, scratch := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "scratch")
	for _, d := range []string{filepath.Join(ws, ".git"), home, scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail(err.Error())
		}
	}
	expand := strings.NewReplacer("$WORKSPACE", ws, "$HOME", home, "$SCRATCH", scratch)
	place := func(p string) string {
		if strings.HasPrefix(p, "~/") {
			return filepath.Join(home, p[2:])
		}
		return filepath.Join(ws, expand.Replace(p))
	}
	for p, content := range tc.Files {
		full := place(p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fail(err.Error())
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return fail(err.Error())
		}
	}
	layers := []*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}
	if policyText != "" {
		l, err := policy.Parse(policy.KindFlag, file+"#policy", []byte(policyText))
		if err != nil {
			return fail("the policy does not load:\n" + err.Error())
		}
		layers = append(layers, l)
	}
	if extra != nil {
		layers = append(layers, extra)
	}
	p, err := policy.Merge(layers, &lazyCEL{})
	if err != nil {
		return fail("the policy does not load:\n" + err.Error())
	}
	g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Home: home, TempDirs: []string{scratch},
		Vars: map[string]string{"HOME": home, "TMPDIR": scratch, "USER": "agent"}})
	if err != nil {
		return fail(err.Error())
	}
	toCall := func(m map[string]any, id string) (veto.Call, error) {
		b, err := json.Marshal(expandAll(m, expand))
		if err != nil {
			return veto.Call{}, err
		}
		c, err := veto.DecodeCall(b, veto.DefaultLimits)
		if err != nil {
			return c, err
		}
		if c.Cwd == "" {
			c.Cwd = ws
		}
		if _, hasRun := m["run"]; !hasRun {
			c.Run = veto.Run{Ref: "test-run", Fresh: true}
		}
		if c.ID == "" {
			c.ID = id
		}
		return c, nil
	}
	for i, st := range tc.Before {
		switch {
		case st.Change != nil:
			full := place(st.Change.Path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return fail(err.Error())
			}
			if err := os.WriteFile(full, []byte(st.Change.Content), 0o644); err != nil {
				return fail(err.Error())
			}
		case st.Call != nil:
			c, err := toCall(st.Call, fmt.Sprintf("before-%d", i+1))
			if err != nil {
				return fail(fmt.Sprintf("before[%d]: %v", i, err))
			}
			v := g.Decide(ctx, &c)
			if v.Allowed && st.Outcome != "" {
				if err := g.ObserveCall(ctx, &c, veto.Outcome(st.Outcome)); err != nil {
					return fail(fmt.Sprintf("before[%d]: %v", i, err))
				}
			}
		default:
			return fail(fmt.Sprintf("before[%d]: want call or change", i))
		}
	}
	if tc.Call == nil {
		return fail("the case has no call")
	}
	c, err := toCall(tc.Call, "case")
	if err != nil {
		return fail("call: " + err.Error())
	}
	return g.Decide(ctx, &c), ""
}

func describe(verdict, rule, reason string) string {
	s := verdict
	if rule != "" {
		s += " " + rule
	}
	if reason != "" {
		s += "/" + reason
	}
	return s
}

func expandAll(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = expandAll(e, r)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = expandAll(e, r)
		}
		return s
	}
	return v
}
