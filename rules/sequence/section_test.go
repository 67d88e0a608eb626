package sequence_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/policytest"
	"github.com/vetohq/veto/rules/sequence"
)

var (
	merge = policytest.Merge
	shows = policytest.Shows
)

// The sequence section through a policy's files: limits only go down
// after the user's file, a limit of 0 is a limit, and what does not parse
// is refused with where it is.
func TestSequenceSectionThroughTheFiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    []string
		calls    map[string]int
		failed   int
		shown    [][3]string
		problem  string
		noChange bool
	}{
		{name: "the user's limits", files: []string{policy.KindUser, "sequence: {max_calls: {Bash: 5, \"mcp__github__*\": 0}, max_failed_writes: 3}"},
			calls: map[string]int{"Bash": 5, "mcp__github__*": 0}, failed: 3,
			shown: [][3]string{{"sequence.max_calls", "Bash: 5", "user"}, {"sequence.max_calls", "mcp__github__*: 0", "user"}, {"sequence.max_failed_writes", "3", "user"}}},
		{name: "a project lowers, never raises", files: []string{policy.KindUser, "sequence: {max_calls: {Bash: 5, Read: 5}, max_failed_writes: 3}",
			policy.KindProject, "sequence: {max_calls: {Bash: 2, Read: 9, Write: 4}, max_failed_writes: 9}"},
			calls: map[string]int{"Bash": 2, "Read": 5, "Write": 4}, failed: 3,
			shown: [][3]string{{"sequence.max_calls", "Bash: 2", "project"}, {"sequence.max_calls", "Write: 4", "project"}}},
		{name: "the user's file replaces a project's", files: []string{policy.KindProject, "sequence: {max_calls: {Bash: 2}}",
			policy.KindUser, "sequence: {max_calls: {Bash: 7}}"},
			calls: map[string]int{"Bash": 7}},
		{name: "a malformed tool glob", files: []string{policy.KindUser, "sequence: {max_calls: {\"Bash[\": 1}}"}, problem: "sequence.max_calls: \"Bash[\" is not a tool name or glob"},
		{name: "a negative limit", files: []string{policy.KindUser, "sequence: {max_calls: {Bash: -1}}"}, problem: "want a limit of 0 or more"},
		{name: "a negative failed-write limit", files: []string{policy.KindUser, "sequence: {max_failed_writes: -2}"}, problem: "sequence.max_failed_writes: want a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := merge(t, tc.files...)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("err %v, want %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sq := policy.Effective[sequence.Settings](p, sequence.SequenceSection.Key)
			if len(sq.MaxCalls) != len(tc.calls) {
				t.Errorf("max_calls %v, want %v", sq.MaxCalls, tc.calls)
			}
			for g, n := range tc.calls {
				if got, ok := sq.MaxCalls[g]; !ok || got != n {
					t.Errorf("max_calls %v, want %v", sq.MaxCalls, tc.calls)
				}
			}
			if sq.MaxFailedWrites != tc.failed {
				t.Errorf("max_failed_writes %d, want %d", sq.MaxFailedWrites, tc.failed)
			}
			for _, s := range tc.shown {
				if !shows(p, s[0], s[1], s[2]) {
					t.Errorf("the explanation does not show %s: %s from the %s file: %q", s[0], s[1], s[2], p.Show())
				}
			}
		})
	}
	if y := policy.DefaultYAML(); !strings.Contains(y, "# sequence:") || !strings.Contains(y, "max_failed_writes: 3") {
		t.Errorf("the default policy file has no sequence section:\n%s", y)
	}
}

// Through a gate: max_calls denies only the tools it names on a history
// veto cannot prove complete (it is scoped), and counts a limit of 0.
func TestMaxCallsIsScopedToItsTools(t *testing.T) {
	g, _, ws := gate(t, "sequence:\n  max_calls: {Bash: 5, WebFetch: 0}\n")
	late := veto.Run{Ref: "late", PriorTurns: 3}
	if v := g.Decide(ctx, &veto.Call{ID: "b", Tool: "Bash", Args: map[string]any{"command": "ls"}, Cwd: ws, Run: late}); v.Allowed ||
		v.Rule != "sequence.max_calls" || v.Reason != "history_incomplete" {
		t.Fatalf("a limited tool on an incomplete history: %+v", v)
	}
	if v := g.Decide(ctx, &veto.Call{ID: "r", Tool: "Read", Args: map[string]any{"file_path": "src/a.go"}, Cwd: ws, Run: late}); !v.Allowed {
		t.Fatalf("a tool no limit names, on an incomplete history: %+v", v)
	}
	fresh := veto.Run{Ref: "fresh", Fresh: true}
	if v := g.Decide(ctx, &veto.Call{ID: "f", Tool: "WebFetch", Args: map[string]any{"url": "https://a.example/", "prompt": "p"}, Cwd: ws, Run: fresh}); v.Allowed ||
		v.Rule != "sequence.max_calls" || v.Reason != "max_calls" {
		t.Fatalf("a tool limited to 0 calls: %+v", v)
	}
}

// The rules with no descriptor function, no tally or no history; and a
// tally that cannot be read fails each rule (an error: rule_failed), and
// veto explain says the taint could not be read.
func TestSequenceRulesWithoutTheirInputs(t *testing.T) {
	rules, err := sequence.Rules(sequence.Config{Private: []string{"secrets/**"}, MaxCalls: map[string]int{"Bash": 1}, MaxFailedWrites: 1})
	if err != nil || len(rules) != 3 {
		t.Fatal(rules, err)
	}
	secret := veto.Target{Kind: veto.TargetFile, ID: "/w/secrets/k"}
	read := veto.NewHistory([]veto.Observation{
		{Seq: 2, CallID: "a", Tool: "Read", Outcome: veto.Succeeded, Target: secret},
		{Seq: 3, CallID: "b", Tool: "Bash", Outcome: veto.Failed, Target: secret},
	}, true)
	net := &veto.Descriptor{Name: "WebFetch", Caps: veto.CapNetwork}
	in := &veto.Input{Call: &veto.Call{Tool: "WebFetch"}, Descriptor: net, History: &read}
	if d, err := rules[0].Check(ctx, in); err != nil || !d.Denied() || d.Reason() != "private_read_before_egress" {
		t.Fatalf("egress after a read, no descriptors: %+v %v", d, err)
	}
	bash := &veto.Input{Call: &veto.Call{Tool: "Bash"}, Descriptor: &veto.Descriptor{Name: "Bash", Caps: veto.CapExecutes | veto.CapWrites}, Target: secret, History: &read}
	if d, err := rules[1].Check(ctx, bash); err != nil || !d.Denied() || d.Reason() != "max_calls" {
		t.Fatalf("max_calls: %+v %v", d, err)
	}
	if d, err := rules[2].Check(ctx, bash); err != nil || !d.Denied() || d.Reason() != "max_failed_writes" {
		t.Fatalf("max_failed_writes, a tool with no descriptor counted: %+v %v", d, err)
	}
	got, err := sequence.Taint(sequence.Config{Private: []string{"secrets/**"}}, &read)
	if err != nil || len(got) != 2 {
		t.Fatalf("Taint without descriptors: %v %v", got, err)
	}
	// No history and no tally: nothing ran.
	for i, r := range rules {
		if d, err := r.Check(ctx, &veto.Input{Call: &veto.Call{Tool: "Bash"}, Descriptor: net, Target: secret}); err != nil || d.Denied() {
			t.Errorf("rule %d on no history: %+v %v", i, d, err)
		}
	}
	// A tally that cannot be read: a store's, closed since the run was loaded.
	g, store, ws := gate(t, "")
	if v := g.Decide(ctx, &veto.Call{ID: "c", Tool: "Read", Args: map[string]any{"file_path": "src/a.go"}, Cwd: ws, Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed {
		t.Fatal(v)
	}
	st, err := store.Load(ctx, "r")
	if err != nil || st.Tally == nil {
		t.Fatal(st, err)
	}
	store.Close()
	for i, r := range rules {
		in := &veto.Input{Call: &veto.Call{Tool: "Bash"}, Descriptor: &veto.Descriptor{Name: "Bash", Caps: veto.CapNetwork | veto.CapWrites}, Target: secret, History: &read, Tally: st.Tally}
		if d, err := r.Check(ctx, in); err == nil {
			t.Errorf("rule %d on an unreadable tally: %+v, want an error", i, d)
		}
	}
	k, ok := rules[0].(veto.Knower)
	if !ok {
		t.Fatal("sequence.no_egress_after_private_read does not tell veto explain its taint")
	}
	if got := k.Known(ctx, &veto.Input{Call: &veto.Call{Tool: "WebFetch"}, History: &read, Tally: st.Tally}); len(got) != 1 || got[0] != "the run's taint could not be read" {
		t.Errorf("Known on an unreadable history: %q", got)
	}
	// The same count as data, for the page: an error, no observations.
	tr, ok := rules[0].(veto.Tainter)
	if !ok {
		t.Fatal("sequence.no_egress_after_private_read does not give its taint as data")
	}
	if got, err := tr.Taint(ctx, &veto.Input{Call: &veto.Call{Tool: "WebFetch"}, History: &read, Tally: st.Tally}); err == nil || len(got) != 0 {
		t.Errorf("Taint on an unreadable history: %v %v", got, err)
	}
}
