package live_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
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
	lv, err := live.Start(ctx, live.Source{Files: policy.LoadOptions{FlagPath: file, Compiler: cel}, Revisions: revs,
		Build: func(p *policy.Policy) (*veto.Gate, error) {
			return p.Gate(policy.BuildOptions{Store: store, Home: dir})
		}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	decide := func() veto.Verdict {
		n++
		c := &veto.Call{Tool: "Bash", Args: map[string]any{"command": "echo hi"}, Cwd: dir, Run: veto.Run{Ref: "r" + strings.Repeat("x", n), Fresh: true}}
		cur := lv.Current()
		v := cur.Gate.Decide(ctx, c)
		lv.Shadow(cur, c, &v)
		return v
	}
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
	if cur.Rev != edited || !strings.Contains(cur.Err, "veto.yaml:3:") || decide().Reason != "echo_refused" || lv.Failures.Load() != 1 {
		t.Fatalf("after a broken edit: %s %q (%d failures)", cur.Rev, cur.Err, lv.Failures.Load())
	}
	if lv.Check(ctx) || lv.Failures.Load() != 1 {
		t.Fatal("the same broken edit was tried again")
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

	shadow := push(sqlstore.HeadShadow, policy.NamedFile{Name: "deny.yaml", Body: []byte(denyEcho)})
	if !lv.Check(ctx) || lv.Current().ShadowRev != shadow {
		t.Fatalf("the shadow was not taken: %+v", lv.Current())
	}
	for range 3 {
		if v := decide(); !v.Allowed {
			t.Fatalf("the shadow changed a verdict: %+v", v)
		}
	}
	var groups []sqlstore.DiffGroup
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if groups, err = revs.Diffs(ctx, shadow); err == nil && len(groups) == 1 && groups[0].Calls == 3 {
			break
		}
	}
	if len(groups) != 1 || groups[0].Calls != 3 || groups[0].Active != "allow" || groups[0].Shadow != "deny" ||
		groups[0].ShadowRule != "org.no-echo" || groups[0].ActiveRev != open {
		t.Fatalf("differences: %+v", groups)
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
