package server_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	_ "github.com/vetohq/veto/adapters" // the hook endpoints' adapters, registered
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/server/servertest"
	"github.com/vetohq/veto/sqlstore"
)

// service is one veto serve in the test's process, on a real store.
type service struct {
	t     testing.TB
	url   string
	store testStore
	toks  *server.Tokens
	home  string        // the actor's home: ~/.ssh lives here
	work  string        // the workspace calls run in
	logs  *lockedBuffer // the gate's and the server's log lines
	h     *server.Server
}

// world is servertest's, in this package's words.
type world struct{ home, work, policy string }

func newWorld(t testing.TB) world {
	t.Helper()
	w := servertest.NewWorld(t)
	return world{w.Home, w.Work, w.Policy}
}

func sqliteStore(t testing.TB) (*sqlstore.Store, string) { return servertest.SQLiteStore(t) }

func pgStore(t testing.TB, dsn string) (*sqlstore.Store, string) { return servertest.PGStore(t, dsn) }

// testStore is a store with its database.
type testStore interface {
	server.Store
	DB() *sql.DB
}

// start serves the built-in policy on st, with authentication on.
func start(t testing.TB, w world, st testStore, dialect string, mod func(*server.Config)) *service {
	t.Helper()
	cel, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(policy.LoadOptions{FlagPath: w.policy, Compiler: cel})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	g, err := p.Gate(policy.BuildOptions{Store: st, Home: w.home, Logger: jsonLogger(logs),
		Vars: map[string]string{"HOME": w.home, "TMPDIR": os.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	toks, err := server.OpenTokens(context.Background(), sqlstore.NewTokens(st.DB, dialect))
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Gate: g, Store: st, Tokens: toks, Policy: "builtin: {}\n", Logger: jsonLogger(logs), Poll: 20 * time.Millisecond,
		WorkspaceRoots: []string{w.home}}
	if mod != nil {
		mod(&cfg)
	}
	h, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &service{t: t, url: ts.URL, store: st, toks: toks, home: w.home, work: w.work, logs: logs, h: h}
}

// token makes a token for actor: a person's for a user, else a
// service's (the tests' runtimes).
func (s *service) token(actor string) string {
	s.t.Helper()
	role := server.RoleService
	if strings.HasPrefix(actor, "user:") {
		role = server.RolePerson
	}
	return s.tokenAs(actor, role)
}

// tokenAs makes a token of role for actor.
func (s *service) tokenAs(actor string, role server.Role) string {
	s.t.Helper()
	a, err := server.ParseActor(actor)
	if err != nil {
		s.t.Fatal(err)
	}
	_, secret, err := s.toks.Create(context.Background(), a, role, time.Now())
	if err != nil {
		s.t.Fatal(err)
	}
	return secret
}

// post sends body to path with token ("" sends none) and returns the
// status and the decoded JSON answer.
func (s *service) post(path, token string, body any) (int, map[string]any) {
	s.t.Helper()
	return servertest.Post(s.t, s.url, path, token, body)
}

func (s *service) get(path, token string) (int, map[string]any) {
	s.t.Helper()
	return servertest.Get(s.t, s.url, path, token)
}

func (s *service) do(req *http.Request) (int, map[string]any) {
	s.t.Helper()
	return servertest.Do(s.t, req, "")
}

// call is a call in veto check's JSON form, run in the workspace.
// argsHash is the hash of a call's arguments, as an answer names them.
func argsHash(args map[string]any) string { return veto.ArgsHash(&veto.Call{Args: args}) }

func (s *service) call(id, run, tool string, args map[string]any) map[string]any {
	return map[string]any{"call_id": id, "tool": tool, "args": args, "cwd": s.work,
		"run": map[string]any{"ref": run, "fresh": true}}
}

// decisions returns the decision events of run, by call id.
func decisions(t testing.TB, st *sqlstore.Store, run string) map[string][]veto.Event {
	t.Helper()
	evs, err := st.Events(context.Background(), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]veto.Event{}
	for _, e := range evs {
		if e.Kind == veto.EventAllowed || e.Kind == veto.EventDenied || e.Kind == veto.EventToolDenied {
			out[e.CallID] = append(out[e.CallID], e)
		}
	}
	return out
}

func freshPG(t testing.TB) string { return pgtest.Fresh(t) }
