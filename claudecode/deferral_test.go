package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// askedAlone and aloneIn are askedIn and entryOf as one answer.
func askedAlone(path, id string) bool {
	found, alone, _ := askedIn(path, id)
	return found && alone
}

func aloneIn(b []byte, id string, cut bool) bool {
	found, alone := entryOf(b, id, cut)
	return found && alone
}

func TestDeferKnown(t *testing.T) {
	for in, want := range map[string]bool{
		"claude-code_2-1-332_harness": true,
		"claude-code_2-1-89_harness":  true,
		"claude-code_2-1-89":          true,
		"claude-code_2-2-0_x":         true,
		"claude-code_3-0-0_harness":   true,
		"claude-code_2-1-88_harness":  false,
		"claude-code_2-0-999_harness": false,
		"claude-code_1-9-999_harness": false,
		"claude-code_2-1_harness":     false,
		"claude-code_2-1-332-1_x":     false,
		"claude-code_2-1-0332_x":      false, // not a number as written
		"claude-code_2-1--1_x":        false,
		"claude-code_2-1-x_harness":   false,
		"codex_2-1-332_harness":       false,
		"":                            false,
	} {
		if got := deferKnown(in); got != want {
			t.Errorf("deferKnown(%q) = %v, want %v", in, got, want)
		}
	}
}

const (
	alone    = `{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"x"}}]}}`
	siblings = `{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"two"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}},{"type":"tool_use","id":"toolu_2","name":"Read","input":{}}]}}`
	userSays = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"toolu_1"}]}}`
	other    = `{"type":"assistant","message":{"id":"m3","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{}}]}}`
)

func TestAloneIn(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		cut   bool
		want  bool
	}{
		{"the call alone in its entry", []string{userSays, alone}, false, true},
		{"the call beside another", []string{siblings}, false, false},
		{"the latest entry of the call decides", []string{siblings, other, alone}, false, true},
		{"only a tool result names it", []string{userSays}, false, false},
		{"another call only", []string{other}, false, false},
		{"no entry at all", nil, false, false},
		{"a broken line is passed over", []string{alone, `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1"`}, false, true},
		{"the first line of a cut tail is not read", []string{alone, other}, true, false},
		{"an entry of another type", []string{strings.Replace(alone, `"assistant"`, `"progress"`, 1)}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := aloneIn([]byte(strings.Join(c.lines, "\n")+"\n"), "toolu_1", c.cut); got != c.want {
				t.Fatalf("aloneIn = %v, want %v", got, c.want)
			}
		})
	}
}

var question = veto.Verdict{Ask: true, Tool: "Bash", Stage: veto.StageRule, Rule: "deploy-needs-person",
	Reason: "deploy_needs_person", Message: "A deploy needs a person's approval."}

// Interactive sessions: Claude Code's own prompt asks, with veto's
// sentence, in the permission modes where it was seen to ask (every mode
// from 2.1.332; default and bypassPermissions before); elsewhere the
// question is refused.
func TestAskPromptsInteractively(t *testing.T) {
	type c struct{ version, mode string }
	for k, want := range map[c]bool{
		{"2-1-332", "default"}: true, {"2-1-332", "bypassPermissions"}: true, {"2-1-332", "acceptEdits"}: true,
		{"2-1-332", "plan"}: true, {"2-1-332", "auto"}: true, {"2-1-332", "dontAsk"}: true, {"2-1-332", ""}: false,
		{"2-1-332", "unknownMode"}: false, {"2-2-0", "auto"}: true,
		{"2-1-331", "default"}: true, {"2-1-331", "bypassPermissions"}: true, {"2-1-331", "acceptEdits"}: false,
		{"2-1-331", "plan"}: false, {"2-1-331", "auto"}: false, {"2-1-331", "dontAsk"}: false,
		{"2-1-88", "default"}: false,
	} {
		mode := k.mode
		a := Adapter{Attended: "1", Agent: "claude-code_" + k.version + "_harness"}
		ev := &agent.Event{Kind: agent.Decide, PermissionMode: mode, Call: veto.Call{ID: "toolu_1", Tool: "Bash"}}
		r, got := a.Ask(ev, question)
		if got != want {
			t.Errorf("%s, mode %q: Ask = %v, want %v", k.version, mode, got, want)
			continue
		}
		if got && (r.Exit != 0 || !strings.Contains(r.Stdout, `"permissionDecision":"ask"`) ||
			!strings.Contains(r.Stdout, "veto asks a person about this Bash call (rule deploy-needs-person, reason deploy_needs_person)") ||
			!strings.Contains(r.Stdout, "veto's page")) {
			t.Errorf("mode %q: the prompt reply is %+v", mode, r)
		}
	}
	if r := (Adapter{}).Permit(true, ""); r.Exit != 0 || !strings.Contains(r.Stdout, `"behavior":"allow"`) {
		t.Errorf("Permit(true) = %+v", r)
	}
	if r := (Adapter{}).Permit(false, "refused: approval_refused"); r.Exit != 0 || !strings.Contains(r.Stdout, `"behavior":"deny"`) || !strings.Contains(r.Stdout, "approval_refused") {
		t.Errorf("Permit(false) = %+v", r)
	}
}

// Ask holds a call only where Claude Code honours defer; every other case
// is false, and the call is then refused.
func TestAskDefersOnlyWhereHonoured(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(tr, []byte(userSays+"\n"+alone+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	both := filepath.Join(dir, "both.jsonl")
	if err := os.WriteFile(both, []byte(siblings+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tr, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	ok := Adapter{Attended: "0", Agent: "claude-code_2-1-332_harness"}
	ev := func(transcript string) *agent.Event {
		return &agent.Event{Kind: agent.Decide, Transcript: transcript, Call: veto.Call{ID: "toolu_1", Tool: "Bash"}}
	}
	for _, c := range []struct {
		name string
		a    Adapter
		ev   *agent.Event
		want bool
	}{
		{"print mode, alone", ok, ev(tr), true},
		{"attended", Adapter{Attended: "1", Agent: ok.Agent}, ev(tr), false},
		{"attended unknown", Adapter{Agent: ok.Agent}, ev(tr), false},
		{"no AI_AGENT", Adapter{Attended: "0"}, ev(tr), false},
		{"too old", Adapter{Attended: "0", Agent: "claude-code_2-1-80_harness"}, ev(tr), false},
		{"siblings", ok, ev(both), false},
		{"no transcript", ok, ev(""), false},
		{"a relative transcript path", ok, ev("s.jsonl"), false},
		{"a missing transcript", ok, ev(filepath.Join(dir, "nope.jsonl")), false},
		{"a directory", ok, ev(dir), false},
		{"not a decision", ok, &agent.Event{Kind: agent.Observe, Transcript: tr, Call: veto.Call{ID: "toolu_1"}}, false},
		{"no event", ok, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, got := c.a.Ask(c.ev, question)
			if got != c.want {
				t.Fatalf("Ask = %v, want %v", got, c.want)
			}
			if !got {
				return
			}
			if r.Exit != 0 || !strings.Contains(r.Stdout, `"permissionDecision":"defer"`) || !strings.Contains(r.Stdout, "until a person approves it") || r.Stderr != "" {
				t.Fatalf("the defer reply is %+v", r)
			}
		})
	}
	// A symlinked transcript is followed (Claude Code's own file may be
	// reached through one); it is only read.
	if _, got := ok.Ask(ev(filepath.Join(dir, "link.jsonl")), question); !got {
		t.Fatal("a symlinked transcript is not read")
	}
}

func FuzzAloneIn(f *testing.F) {
	f.Add([]byte(alone+"\n"), "toolu_1", false)
	f.Add([]byte(siblings+"\n"+userSays), "toolu_2", true)
	f.Add([]byte("\n\n{}\n"), "", false)
	f.Fuzz(func(t *testing.T, b []byte, id string, cut bool) {
		// It never panics, and a call without an id is never alone.
		if aloneIn(b, id, cut) && id == "" {
			t.Fatal("a call without an id is held")
		}
	})
}

// BenchmarkAskedAlone: the cost a question adds in print mode, reading a
// long session's transcript (about 8 MiB, the most read) to its last entry.
func BenchmarkAskedAlone(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "long.jsonl")
	var buf strings.Builder
	for buf.Len() < 8<<20 {
		buf.WriteString(userSays + "\n" + other + "\n")
	}
	buf.WriteString(alone + "\n")
	if err := os.WriteFile(p, []byte(buf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if !askedAlone(p, "toolu_1") {
			b.Fatal("not alone")
		}
	}
}

// The entry is found however far back within the last 8 MiB, and not
// beyond them.
func TestAskedAloneReadsBackEightMiB(t *testing.T) {
	dir := t.TempDir()
	after := func(n int) string {
		p := filepath.Join(dir, fmt.Sprintf("after-%d.jsonl", n))
		var b strings.Builder
		b.WriteString(alone + "\n")
		for b.Len() < n {
			b.WriteString(other + "\n")
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for n, want := range map[int]bool{0: true, 100 << 10: true, 1 << 20: true, 7 << 20: true, 9 << 20: false} {
		if got := askedAlone(after(n), "toolu_1"); got != want {
			t.Errorf("the entry followed by %d bytes: alone %v, want %v", n, got, want)
		}
	}
}

// The call's entry may reach the transcript just after the hook started:
// it is looked for again, for a while.
func TestAskWaitsForTheEntry(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(userSays+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			f.WriteString(alone + "\n")
			f.Close()
		}
	}()
	a := Adapter{Attended: "0", Agent: "claude-code_2-1-332_harness"}
	if _, ok := a.Ask(&agent.Event{Kind: agent.Decide, Transcript: p, Call: veto.Call{ID: "toolu_1"}}, question); !ok {
		t.Fatal("the entry written 200 ms late was not waited for")
	}
	// The transcript itself is created late.
	late := filepath.Join(t.TempDir(), "late.jsonl")
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.WriteFile(late, []byte(alone+"\n"), 0o600)
	}()
	if _, ok := a.Ask(&agent.Event{Kind: agent.Decide, Transcript: late, Call: veto.Call{ID: "toolu_1"}}, question); !ok {
		t.Fatal("a transcript created 200 ms late was not waited for")
	}
	// Never written: refused once the wait is over.
	q := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(q, []byte(userSays+"\n"), 0o600)
	if _, ok := a.Ask(&agent.Event{Kind: agent.Decide, Transcript: q, Call: veto.Call{ID: "toolu_1"}}, question); ok {
		t.Fatal("a call with no entry was held")
	}
}

// A report that a call ran is the person's answer only from an attended
// Claude Code that asks in the report's mode, or in acceptEdits (the
// dialog's second yes switches to it).
func TestPrompted(t *testing.T) {
	for _, c := range []struct {
		attended, version, mode string
		kind                    agent.Kind
		want                    bool
	}{
		{"1", "2-1-332", "default", agent.Observe, true},
		{"1", "2-1-332", "acceptEdits", agent.Observe, true},
		{"1", "2-1-331", "acceptEdits", agent.Observe, true},
		{"1", "2-1-331", "plan", agent.Observe, false},
		{"1", "2-1-332", "plan", agent.Observe, true},
		{"0", "2-1-332", "default", agent.Observe, false},
		{"", "2-1-332", "default", agent.Observe, false},
		{"1", "2-1-88", "default", agent.Observe, false},
		{"1", "2-1-332", "default", agent.Decide, false},
	} {
		a := Adapter{Attended: c.attended, Agent: "claude-code_" + c.version + "_harness"}
		name, got := a.Prompted(&agent.Event{Kind: c.kind, PermissionMode: c.mode})
		if got != c.want || (got && name != "claude-code") {
			t.Errorf("%+v: Prompted = %q %v, want %v", c, name, got, c.want)
		}
	}
	if _, ok := (Adapter{Attended: "1", Agent: "claude-code_2-1-332_harness"}).Prompted(nil); ok {
		t.Error("Prompted(nil) = true")
	}
}
