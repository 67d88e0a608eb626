package live_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

const denyEcho = "rules:\n  - id: org.no-echo\n    deny: 'tool == \"Bash\" && args.command.startsWith(\"echo\")'\n    reason: echo_refused\n"

// The live policy: files reloaded on change, a broken change kept out
// (the last good policy deciding, the problem's place in Err), the
// database's active revision taking the files' place, a shadow revision's
// differences recorded, and a stored revision changed behind veto's back
// refused.
func TestLivePolicy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cel, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "veto.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(file+".tmp", []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			t.Fatal(err)
		}
	}
	write("egress:\n  allow: [docs.example.org]\n")
	revs := sqlstore.NewRevisions(func() *sql.DB { return st.DB() }, "sqlite")
	store := memstore.New()
	var brokenBuild atomic.Bool
	lv, err := live.Start(ctx, live.Source{Files: policy.LoadOptions{FlagPath: file, Compiler: cel}, Revisions: revs,
		Build: func(p *policy.Policy) (*veto.Gate, error) {
			if brokenBuild.Load() {
				return nil, errors.New("no gate")
			}
			return p.Gate(policy.BuildOptions{Store: store, Home: dir})
		}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	decideCmd := func(cmd string) veto.Verdict {
		n++
		c := &veto.Call{Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: dir, Run: veto.Run{Ref: "r" + strings.Repeat("x", n), Fresh: true}}
		cur := lv.Current()
		v := cur.Gate.Decide(ctx, c)
		lv.Shadow(cur, c, &v)
		return v
	}
	decide := func() veto.Verdict { return decideCmd("echo hi") }
	first := lv.Current()
	if first.From != "files" || !decide().Allowed || lv.Check(ctx) {
		t.Fatalf("at start: from %s, or a check with nothing changed took a policy", first.From)
	}

	write("egress:\n  allow: [docs.example.org]\n" + denyEcho)
	if !lv.Check(ctx) || decide().Reason != "echo_refused" {
		t.Fatal("an edit was not taken")
	}
	edited := lv.Current().Rev

	write("rules:\n  - id: org.bad\n    deny: 'tool =='\n    reason: x\n")
	if lv.Check(ctx) {
		t.Fatal("a broken edit was taken")
	}
	cur := lv.Current()
	if cur.Rev != edited || !strings.Contains(cur.Err, "veto.yaml:3:") || !strings.HasPrefix(cur.ErrWhere, "1 problem(s) at "+file+":3:") ||
		strings.Contains(cur.ErrWhere, "org.bad") || decide().Reason != "echo_refused" || lv.Failures.Load() != 1 {
		t.Fatalf("after a broken edit: %s %q (%d failures)", cur.Rev, cur.Err, lv.Failures.Load())
	}
	if lv.Check(ctx) || lv.Failures.Load() != 1 || lv.Current().Err == "" {
		t.Fatal("the same broken edit was tried again, or its problem is no longer said")
	}

	// A revision on the database takes the files' place.
	push := func(head string, files ...policy.NamedFile) string {
		t.Helper()
		p, err := policy.LoadRevision(files, cel)
		if err != nil {
			t.Fatal(err)
		}
		rev := sqlstore.Revision{ID: p.Revision(), By: "test", At: time.Now()}
		for _, f := range files {
			rev.Files = append(rev.Files, sqlstore.RevisionFile{Name: f.Name, Body: f.Body})
		}
		if err := revs.Push(ctx, rev, head); err != nil {
			t.Fatal(err)
		}
		return rev.ID
	}
	open := push(sqlstore.HeadActive, policy.NamedFile{Name: "open.yaml", Body: []byte("egress:\n  allow: [docs.example.org]\n")})
	if !lv.Check(ctx) || lv.Current().From != "revision" || lv.Current().Rev != open || lv.Current().Err != "" || !decide().Allowed {
		t.Fatalf("the active revision: %+v", lv.Current())
	}
	if lv.Check(ctx) || lv.Reloads.Load() != 2 {
		t.Fatalf("a look with nothing changed took a policy, or the reloads are miscounted (%d, want 2)", lv.Reloads.Load())
	}

	// A policy whose gate cannot be built is not taken either: the last
	// good one decides.
	brokenBuild.Store(true)
	push(sqlstore.HeadActive, policy.NamedFile{Name: "other.yaml", Body: []byte("egress:\n  allow: [other.example.org]\n")})
	if lv.Check(ctx) || lv.Current().Rev != open || !strings.Contains(lv.Current().Err, "the gate cannot be built") {
		t.Fatalf("a revision whose gate cannot be built: %+v", lv.Current())
	}
	brokenBuild.Store(false)
	if err := revs.Mark(ctx, sqlstore.HeadActive, open, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if lv.Check(ctx) || lv.Current().Rev != open || lv.Current().Err != "" {
		t.Fatalf("back on the open revision, the failed change is still reported: %+v", lv.Current())
	}

	shadow := push(sqlstore.HeadShadow, policy.NamedFile{Name: "deny.yaml", Body: []byte(denyEcho)})
	if !lv.Check(ctx) || lv.Current().ShadowRev != shadow {
		t.Fatalf("the shadow was not taken: %+v", lv.Current())
	}
	var ids []string
	for range 3 {
		v := decide()
		if !v.Allowed {
			t.Fatalf("the shadow changed a verdict: %+v", v)
		}
		ids = append(ids, v.CallID)
		// Decided alike by both: no difference.
		if v := decideCmd("ls"); !v.Allowed {
			t.Fatalf("ls: %+v", v)
		}
	}
	// A call that was not recorded is not compared.
	unrecorded := veto.Verdict{Allowed: true, CallID: "never", Tool: "Bash", Run: "r-none"}
	lv.Shadow(lv.Current(), &veto.Call{Tool: "Bash", Args: map[string]any{"command": "echo x"}}, &unrecorded)
	var groups []sqlstore.DiffGroup
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if groups, err = revs.Diffs(ctx, shadow); err == nil && len(groups) == 1 && groups[0].Calls == 3 {
			break
		}
	}
	if len(groups) != 1 || groups[0].Calls != 3 || groups[0].Active != "allow" || groups[0].Shadow != "deny" ||
		groups[0].ShadowRule != "org.no-echo" || groups[0].ShadowReason != "echo_refused" || groups[0].ActiveRev != open ||
		time.Since(groups[0].At) > time.Minute {
		t.Fatalf("differences: %+v", groups)
	}
	time.Sleep(100 * time.Millisecond) // the agreeing calls were compared too
	if got := lv.ShadowDiffs.Load(); got != 3 {
		t.Fatalf("%d differences counted, want 3", got)
	}
	for _, id := range ids {
		var k int
		if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM veto_shadow_diffs WHERE call_id = ?`, id).Scan(&k); err != nil || k != 1 {
			t.Fatalf("call %s: %d differences stored (%v), want 1 under its own id", id, k, err)
		}
	}

	// The stored revision is changed behind veto's back: refused, and the
	// last good policy decides.
	if _, err := st.DB().ExecContext(ctx, `UPDATE veto_policy_revisions SET files = '[]' WHERE id = ?`, shadow); err != nil {
		t.Fatal(err)
	}
	if err := revs.Mark(ctx, sqlstore.HeadActive, shadow, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if lv.Check(ctx) || !strings.Contains(lv.Current().Err, "stored revision was changed") || lv.Current().Rev != open {
		t.Fatalf("a changed revision: %+v", lv.Current())
	}
}

// A database that cannot be read at start (down, damaged) is no reason to
// decide with nothing: the instance starts from its files, and looks again
// each second; a change it cannot see is not taken.
func TestLiveStartsFromFilesWithoutTheDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "veto.yaml")
	if err := os.WriteFile(file, []byte(denyEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	cel, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	down := sqlstore.NewRevisions(func() *sql.DB { return nil }, "postgres")
	lv, err := live.Start(ctx, live.Source{Files: policy.LoadOptions{FlagPath: file, Compiler: cel}, Revisions: down,
		Build: func(p *policy.Policy) (*veto.Gate, error) {
			return p.Gate(policy.BuildOptions{Store: memstore.New(), Home: dir})
		}})
	if err != nil {
		t.Fatal(err)
	}
	cur := lv.Current()
	if cur.From != "files" || cur.Gate == nil {
		t.Fatalf("started as %+v", cur)
	}
	if v := cur.Gate.Decide(ctx, &veto.Call{Tool: "Bash", Args: map[string]any{"command": "echo hi"}, Cwd: dir}); v.Reason != "echo_refused" {
		t.Fatalf("the files' policy does not decide: %+v", v)
	}
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lv.Check(ctx) {
		t.Fatal("a change was taken while the database could not say which revision is active")
	}
}
