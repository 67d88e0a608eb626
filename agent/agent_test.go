package agent_test

import (
	"reflect"
	"strings"
	"testing"

	_ "github.com/vetohq/veto/adapters" // every client's adapter, registered
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// adapters are every client's adapter, by its name in the client table,
// as the registry gives them (each adapter package registers its own).
var adapters = func() map[string]agent.Adapter {
	m := map[string]agent.Adapter{}
	for _, name := range agent.Registered() {
		m[name] = agent.For(name, agent.Env{})
	}
	return m
}()

// Every client of the table has its adapter registered, and the registry
// knows no other name.
func TestEveryClientIsRegistered(t *testing.T) {
	for _, c := range clients.All {
		if adapters[c.Name] == nil {
			t.Errorf("%s: no adapter registered", c.Name)
		}
	}
	if got := agent.Registered(); !reflect.DeepEqual(got, clients.Names()) {
		t.Errorf("registered %v, the table %v", got, clients.Names())
	}
}

// Each adapter's replies are its table entry's.
func TestAdaptersSpeakTheirTableEntry(t *testing.T) {
	for _, c := range clients.All {
		a := adapters[c.Name]
		if a == nil {
			continue
		}
		for _, tc := range []struct {
			got  agent.Reply
			want clients.Reply
		}{{a.Deny("why"), c.Deny}, {a.Allow(false), c.Allow}, {a.Allow(true), c.Approve}} {
			if w := agent.Write(tc.want, "why"); tc.got != w {
				t.Errorf("%s: %+v, the table says %+v", c.Name, tc.got, w)
			}
		}
	}
}

// blocks reports whether a reply is one its client treats as blocking.
func blocks(r agent.Reply) bool {
	return r.Exit == 2 || strings.Contains(r.Stdout, `"deny"`)
}

// FuzzAdapters feeds every adapter the same bytes: none panics, each
// decodes the same way twice, a decided call names its tool and run, and
// every adapter's denial blocks.
func FuzzAdapters(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		`{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
		`{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}`,
		`{"conversation_id":"c","generation_id":"g","hook_event_name":"beforeShellExecution","command":"ls","workspace_roots":["/w"]}`,
		`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["bash","-lc","ls"]},"tool_use_id":"t"}`,
		`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n*** End Patch\nEOF\n","workdir":"sub"},"tool_use_id":"t"}`,
		`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n  *** Update File: b\n*** End Patch"},"tool_use_id":"t"}`,
		`{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`, `{}`, `[]`, `null`, ``, `{"toolArgs":"{"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, a := range adapters {
			e1, err1 := a.Decode(b)
			e2, err2 := a.Decode(b)
			if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(e1, e2) {
				t.Fatalf("%s: two decodes differ", name)
			}
			if err1 == nil && e1.Kind == agent.Decide && (e1.Call.Tool == "" || e1.Call.Run.Ref == "" || e1.Call.ID == "") {
				t.Fatalf("%s: a call without tool, run or id: %+v", name, e1.Call)
			}
			if r := a.Deny("reason"); !blocks(r) {
				t.Fatalf("%s: its denial does not block: %+v", name, r)
			}
		}
	})
}

func TestDenialsAreBoundedAndBlock(t *testing.T) {
	long := strings.Repeat("x", 50_000)
	for name, a := range adapters {
		r := a.Deny(long)
		if !blocks(r) || len(r.Stdout) > 10_000 || len(r.Stderr) > 10_000 {
			t.Errorf("%s: exit %d, stdout %d bytes, stderr %d bytes", name, r.Exit, len(r.Stdout), len(r.Stderr))
		}
		if allow := a.Allow(false); blocks(allow) {
			t.Errorf("%s: its allow blocks: %+v", name, allow)
		}
	}
}
