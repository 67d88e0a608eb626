package page_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/page"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlstore"
)

// TestPageShowsRevisionsMonitorAndShadow: the page says which revision
// decides now and names the revision of each decision; an allow a rule in
// monitor mode would have refused says so; the shadow revision's
// differences are listed by what each revision did, and no argument is.
func TestPageShowsRevisionsMonitorAndShadow(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	cel, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	files := []policy.NamedFile{{Name: "watch.yaml", Body: []byte("rules:\n  - id: org.no-echo\n    deny: 'tool == \"Bash\" && args.command.startsWith(\"echo\")'\n    reason: echo_refused\n    mode: monitor\n")}}
	p, err := policy.LoadRevision(files, cel)
	if err != nil {
		t.Fatal(err)
	}
	revs := sqlstore.NewRevisions(func() *sql.DB { return st.DB() }, d)
	const shadow = "p-5ad0a5ad0a5a"
	if err := revs.RecordDiff(context.Background(), sqlstore.ShadowDiff{ShadowRev: shadow, ActiveRev: p.Revision(), Run: "r0", CallID: "c0",
		Tool: "Bash", At: time.Now(), Active: "allow", Shadow: "deny", ShadowRule: "shell.privilege", ShadowReason: "privilege_escalation"}); err != nil {
		t.Fatal(err)
	}
	var gate *veto.Gate
	s := startWith(t, w, st, d, func(c *server.Config) {
		gate, err = p.Gate(policy.BuildOptions{Store: c.Store, Home: w.home})
		if err != nil {
			t.Fatal(err)
		}
		a := server.Active{Gate: gate, Rev: p.Revision(), From: "revision", ShadowRev: shadow, Show: func() string { return "" }}
		c.Active = func() server.Active { return a }
	}, page.Config{Revisions: revs})
	agent, person := s.token("agent:ci"), s.token("user:ann")
	canary := "echo CANARY-page-fleet"
	if _, m := s.post("/v1/decide", agent, s.call("c1", "r1", "Bash", map[string]any{"command": canary})); m["verdict"] != "allow" || m["would_deny"] != "org.no-echo" {
		t.Fatalf("the monitored call: %v", m)
	}
	hc, _ := pageSession(t, s, person)
	_, html := getPage(t, hc, s.url+"/ui")
	for _, want := range []string{
		`id="policy" class="policy-now" data-rev="` + p.Revision() + `" data-from="revision" data-shadow="` + shadow + `"`,
		`data-would-deny="org.no-echo" data-would-reason="echo_refused"`,
		`revision <code class="rev">` + p.Revision() + `</code>`,
		`id="shadow"`,
		`data-calls="1" data-tool="Bash" data-active="allow" data-shadow="deny" data-shadow-rule="shell.privilege"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(html, "CANARY-page-fleet") {
		t.Fatal("the page shows a call's arguments")
	}
}
