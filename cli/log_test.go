package cli_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v "github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/sqlite"
)

// TestLogShowsRefusedAtResume: veto log's table marks the call that waits
// for a person, the approval, the denial by a changed policy of the call
// the person approved (refused at resume, naming the approval), and an
// approval that expired unused; the JSON lines carry the approval's
// number; no argument text is printed.
func TestLogShowsRefusedAtResume(t *testing.T) {
	const canary = "CANARY-log-7d1c"
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "veto.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ask := &rule.Func{RuleInfo: v.RuleInfo{ID: "ask.deploy", FixedMessages: true},
		Fn: func(_ context.Context, in *v.Input) (v.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.Contains(cmd, "deploy") {
				return v.Ask("deploy_needs_person", "A deploy needs a person."), nil
			}
			return v.Allow(), nil
		}}
	deny := &rule.Func{RuleInfo: v.RuleInfo{ID: "deny.prod", FixedMessages: true},
		Fn: func(_ context.Context, in *v.Input) (v.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.Contains(cmd, "prod") {
				return v.Deny("prod_frozen", "Production is frozen."), nil
			}
			return v.Allow(), nil
		}}
	now := time.Now().Add(-time.Hour)
	clock := func() time.Time { return now }
	before, _ := v.NewGate(v.Config{Store: st, Rules: []v.Rule{ask}, Now: clock})
	after, _ := v.NewGate(v.Config{Store: st, Rules: []v.Rule{ask, deny}, Now: clock})
	call := func(id, cmd string) *v.Call {
		return &v.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd + " # " + canary}, Run: v.Run{Ref: "r1", Fresh: true}}
	}
	ann := v.Actor{Kind: "user", ID: "ann"}
	before.Decide(ctx, call("c1", "make deploy prod"))
	if err := before.Answer(ctx, "r1", "c1", ann, true, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if vd := after.Decide(ctx, call("c2", "make deploy prod")); vd.Allowed {
		t.Fatalf("the approved call under the new policy: %+v", vd)
	}
	before.Decide(ctx, call("c3", "make deploy staging"))
	if err := before.Answer(ctx, "r1", "c3", ann, true, time.Minute); err != nil {
		t.Fatal(err)
	}
	// A person's refusal, asked about again: that answer's, not a resume's.
	before.Decide(ctx, call("c5", "make deploy eu"))
	if err := before.Answer(ctx, "r1", "c5", ann, false, time.Minute); err != nil {
		t.Fatal(err)
	}
	before.Decide(ctx, call("c5", "make deploy eu"))
	st.Close()

	code, out := veto(t, "", "log", "--table", "--all", "--state", path)
	if code != 0 {
		t.Fatalf("veto log: exit %d: %s", code, out)
	}
	for _, want := range []string{
		`invocation_denied +Bash +ask.deploy/deploy_needs_person awaits approval`,
		`approval_granted +Bash +ask.deploy/deploy_needs_person until`,
		`invocation_denied +Bash +deny.prod/prod_frozen refused at resume \(approval #3\)`,
		`approval_granted +Bash +ask.deploy/deploy_needs_person expired`,
		`invocation_denied +Bash +ask.deploy/approval_refused \(the person's answer #8\)`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, canary) {
		t.Fatalf("veto log printed argument text:\n%s", out)
	}
	code, out = veto(t, "", "log", "--run", "r1", "--state", path)
	if code != 0 || !strings.Contains(out, `"call_id":"c2"`) || !regexp.MustCompile(`"call_id":"c2".*"approval":3`).MatchString(out) {
		t.Fatalf("the JSON lines: exit %d: %s", code, out)
	}
}
