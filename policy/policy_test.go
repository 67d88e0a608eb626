package policy_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/rules/sequence"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func compiler(t testing.TB) policy.Compiler {
	t.Helper()
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBrokenPolicyMessages holds the problems reported for broken policy
// files to golden files: each names the file, line and column and says
// what is wrong in a sentence. Run with -update to rewrite.
func TestBrokenPolicyMessages(t *testing.T) {
	inputs, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil || len(inputs) < 10 {
		t.Fatalf("inputs: %v %v", inputs, err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			_, err := policy.Load(policy.LoadOptions{FlagPath: in, Compiler: compiler(t)})
			if err == nil {
				t.Fatal("a broken policy loaded")
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(in, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Fatalf("problems:\n%s\nwant:\n%s", got, want)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !strings.HasPrefix(line, in+":") {
					t.Errorf("a problem does not name the file: %q", line)
				}
			}
		})
	}
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Later files narrow: they add, and never take away.
func TestLayersOnlyNarrow(t *testing.T) {
	dir := t.TempDir()
	user := write(t, dir, "user.yaml", `
builtin:
  off: [file.stale]
files:
  extra_roots: [/srv/scratch, /opt/cache]
shell:
  interpreters: [bash, python3, node]
offer:
  actors: {"agent:*": [Read, Grep, Bash]}
`)
	project := write(t, dir, "project.yaml", `
files:
  extra_roots: [/opt/cache, /etc]
  credentials: ["*.secret"]
shell:
  interpreters: [bash, ruby]
offer:
  unavailable: [WebSearch]
  actors: {"agent:*": [Read, WebFetch]}
`)
	managed := write(t, dir, "managed.yaml", `
shell:
  max_depth: 2
rules:
  - id: org.no-prod
    deny: 'tool == "Bash" && args.command.contains("prod")'
    reason: production
`)
	p, err := policy.Load(policy.LoadOptions{UserPath: user, ProjectPath: project, ManagedPath: managed, Compiler: compiler(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, off := p.Off["file.stale"]; !off {
		t.Error("the user's file could not turn a rule off")
	}
	fs := policy.Effective[files.Settings](p, files.FilesSection.Key)
	sh := policy.Effective[command.Settings](p, command.ShellSection.Key)
	if !slices.Equal(fs.ExtraRoots, []string{"/opt/cache"}) {
		t.Errorf("extra roots %v: the project may only remove roots", fs.ExtraRoots)
	}
	if !slices.Equal(sh.Interpreters, []string{"bash"}) {
		t.Errorf("interpreters %v: the project may only shorten the list", sh.Interpreters)
	}
	if !slices.Contains(fs.Credentials, "*.secret") || !slices.Contains(p.Offer.Unavailable, "WebSearch") {
		t.Error("the project could not add denials")
	}
	if !slices.Equal(p.Offer.Actors["agent:*"], []string{"Read"}) {
		t.Errorf("actor tools %v", p.Offer.Actors["agent:*"])
	}
	if sh.MaxDepth != 2 || len(p.Rules) != 1 {
		t.Errorf("managed settings: depth %d, rules %d", sh.MaxDepth, len(p.Rules))
	}

	// A project cannot turn a rule off, nor redescribe a tool.
	bad := write(t, dir, "bad.yaml", "approve: true\nbuiltin:\n  off: [file.credential]\ntools:\n  Bash:\n    params: {command: content}\n")
	_, err = policy.Load(policy.LoadOptions{ProjectPath: bad, Compiler: compiler(t)})
	if err == nil || !strings.Contains(err.Error(), "only the user's policy may turn a built-in rule off") ||
		!strings.Contains(err.Error(), "cannot change a tool's description") ||
		!strings.Contains(err.Error(), "only the user's policy may make veto approve calls") {
		t.Fatalf("a project weakened the policy: %v", err)
	}
	// A rule id may not repeat across files.
	dup := write(t, dir, "dup.yaml", "rules:\n  - id: org.no-prod\n    deny: 'false'\n    reason: x\n")
	if _, err := policy.Load(policy.LoadOptions{ProjectPath: dup, ManagedPath: managed, Compiler: compiler(t)}); err == nil ||
		!strings.Contains(err.Error(), "already the id of a rule") {
		t.Fatalf("a duplicate rule id across files: %v", err)
	}
}

func TestDefaultYAMLIsTheDefault(t *testing.T) {
	l, err := policy.Parse(policy.KindUser, "default.yaml", []byte(policy.DefaultYAML()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, l}, compiler(t))
	if err != nil {
		t.Fatal(err)
	}
	base, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g1, _ := p.Gate(policy.BuildOptions{Store: memstore.New()})
	g2, _ := base.Gate(policy.BuildOptions{Store: memstore.New()})
	for _, c := range []veto.Call{
		{Tool: "Read", Args: map[string]any{"file_path": "~/.ssh/id_rsa"}, Cwd: "/tmp/x"},
		{Tool: "Write", Args: map[string]any{"file_path": "/etc/x", "content": "y"}, Cwd: "/tmp/x"},
		{Tool: "Bash", Args: map[string]any{"command": "git reset --hard"}, Cwd: "/tmp/x"},
		{Tool: "Bash", Args: map[string]any{"command": "ls"}, Cwd: "/tmp/x"},
	} {
		a, b := c, c
		v1, v2 := g1.Decide(context.Background(), &a), g2.Decide(context.Background(), &b)
		if v1.Allowed != v2.Allowed || v1.Rule != v2.Rule || v1.Reason != v2.Reason {
			t.Errorf("%s: the default file decides %s/%s, the built-in %s/%s", c.Tool, v1.Rule, v1.Reason, v2.Rule, v2.Reason)
		}
	}
}

// TestSchemaIsCurrent fails when docs/veto.schema.json is not what the Go
// types generate; veto policy schema > docs/veto.schema.json updates it.
func TestSchemaIsCurrent(t *testing.T) {
	want, err := os.ReadFile("../docs/veto.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(policy.Schema()) != string(want) {
		t.Fatal("docs/veto.schema.json is stale: run go run ./cmd/veto policy schema > docs/veto.schema.json")
	}
}

// TestPolicyDoesNotLinkCEL pins the shape that keeps a per-call process
// from paying for CEL: package policy must not import cel-go; only
// policy/celrule does.
func TestPolicyDoesNotLinkCEL(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "cel.dev/") || strings.HasPrefix(dep, "google.golang.org/protobuf") {
			t.Fatalf("package policy links %s", dep)
		}
	}
}

// FuzzParse: a policy file never panics the loader, loads the same way
// twice, and every problem names the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(policy.DefaultYAML()))
	for _, in := range []string{"version: 1\n", "files:\n  protected: [a]\n", "rules:\n  - id: x\n    deny: 'true'\n    reason: y\n",
		"tools:\n  a:\n    params: {p: path}\n", "{", "- a\n- b\n", "shell: {max_depth: -1}\n", "offer:\n  actors: {'*': [Read]}\n"} {
		f.Add([]byte(in))
	}
	c := compiler(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		load := func() (*policy.Policy, error) {
			l, err := policy.Parse(policy.KindFlag, "fuzz.yaml", b)
			if err != nil {
				return nil, err
			}
			return policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, l}, c)
		}
		p1, err1 := load()
		p2, err2 := load()
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("two loads differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			ps, ok := err1.(policy.Problems)
			if !ok || len(ps) == 0 {
				t.Fatalf("error %T is not Problems", err1)
			}
			for _, p := range ps {
				if p.File != "fuzz.yaml" && !strings.HasPrefix(p.File, "fuzz.yaml") {
					t.Fatalf("problem without the file: %+v", p)
				}
			}
			return
		}
		if p1.Revision() != p2.Revision() {
			t.Fatal("revision differs")
		}
	})
}

func TestEgressLayersOnlyNarrow(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, user, project, managed string
		mode                         egress.Mode
		allow                        []string
		problem                      string
	}{
		{name: "the user's allowlist with no list allows nothing a project adds",
			user: "egress: {mode: allowlist}", project: "egress: {allow: [evil.example]}",
			mode: egress.Allowlist, allow: []string{}},
		{name: "a project narrows the user's list",
			user: "egress: {mode: allowlist, allow: [a.example, b.example]}", project: "egress: {allow: [b.example, c.example]}",
			mode: egress.Allowlist, allow: []string{"b.example"}},
		{name: "a project may turn allowlist on with its own list",
			project: "egress: {mode: allowlist, allow: [a.example]}", managed: "egress: {allow: [a.example, z.example]}",
			mode: egress.Allowlist, allow: []string{"a.example"}},
		{name: "a project may not open what the user limited",
			user: "egress: {mode: allowlist}", project: "egress: {mode: open}",
			problem: "only the user's policy may open egress"},
		{name: "sequence limits only go down after the user's",
			user: "sequence: {max_calls: {Bash: 5}, max_failed_writes: 3}", project: "sequence: {max_calls: {Bash: 9}, max_failed_writes: 9}",
			mode: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := policy.LoadOptions{Compiler: compiler(t)}
			if tc.user != "" {
				o.UserPath = write(t, dir, "user.yaml", tc.user)
			}
			if tc.project != "" {
				o.ProjectPath = write(t, dir, "project.yaml", tc.project)
			}
			if tc.managed != "" {
				o.ManagedPath = write(t, dir, "managed.yaml", tc.managed)
			}
			p, err := policy.Load(o)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("err %v, want %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eg := policy.Effective[egress.Settings](p, egress.SectionKey)
			sq := policy.Effective[sequence.Settings](p, sequence.SequenceSection.Key)
			if eg.Mode != tc.mode {
				t.Errorf("mode %q, want %q", eg.Mode, tc.mode)
			}
			if tc.allow != nil && (eg.Allow == nil || !slices.Equal(eg.Allow, tc.allow)) {
				t.Errorf("allow %q, want %q", eg.Allow, tc.allow)
			}
			if strings.HasPrefix(tc.name, "sequence") && (sq.MaxCalls["Bash"] != 5 || sq.MaxFailedWrites != 3) {
				t.Errorf("max_calls %v, max_failed_writes %d: a project raised a limit", sq.MaxCalls, sq.MaxFailedWrites)
			}
		})
	}
}

// TestUserRedescribesABuiltinTool: the user's file may replace veto's
// description of a tool (an MCP server's may lag behind the server);
// a project's may not, nor may any file change another file's.
func TestUserRedescribesABuiltinTool(t *testing.T) {
	dir := t.TempDir()
	const spec = "tools:\n  mcp__github__create_issue:\n    params: {body: content, attach: source_path}\n    capabilities: [network, reads]\n"
	user := write(t, dir, "user.yaml", spec)
	p, err := policy.Load(policy.LoadOptions{UserPath: user, Compiler: compiler(t)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range p.Tools {
		if d.Name == "mcp__github__create_issue" {
			n++
			if d.Params["attach"] != veto.RoleSourcePath {
				t.Errorf("the user's description did not replace the built-in one: %+v", d)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d descriptors of the tool, want 1", n)
	}
	project := write(t, dir, "project.yaml", spec)
	if _, err := policy.Load(policy.LoadOptions{ProjectPath: project, Compiler: compiler(t)}); err == nil ||
		!strings.Contains(err.Error(), "already described (builtin)") {
		t.Fatalf("a project redescribed a built-in tool: %v", err)
	}
	if _, err := policy.Load(policy.LoadOptions{UserPath: user, ProjectPath: project, Compiler: compiler(t)}); err == nil ||
		!strings.Contains(err.Error(), "already described ("+user) {
		t.Fatalf("a project redescribed the user's tool: %v", err)
	}
}
