package page_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/page"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/server/servertest"
	"github.com/vetohq/veto/sqlstore"
)

// service is one veto serve in the test's process, on a real store: the
// API and the page on one mux, as cli mounts them.
type service struct {
	t     testing.TB
	url   string
	store testStore
	toks  *server.Tokens
	home  string // the actor's home: ~/.ssh lives here
	work  string // the workspace calls run in
	logs  *lockedBuffer
	api   *server.Server
	h     *page.Page
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
	return startWith(t, w, st, dialect, mod, page.Config{})
}

// startWith is start with the page's own parts.
func startWith(t testing.TB, w world, st testStore, dialect string, mod func(*server.Config), pc page.Config) *service {
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
	api, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pg := page.New(api, pc)
	mux := http.NewServeMux()
	pg.Register(mux)
	mux.Handle("/", api)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return &service{t: t, url: ts.URL, store: st, toks: toks, home: w.home, work: w.work, logs: logs, api: api, h: pg}
}

// token makes a token for actor: a person's for a user, else a
// service's (the tests' runtimes).
func (s *service) token(actor string) string {
	s.t.Helper()
	role := server.RoleService
	if strings.HasPrefix(actor, "user:") {
		role = server.RolePerson
	}
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

// signIn signs in to the page in the browser with a person's token, as a
// person does: typed into the sign-in form, never in the address.
func signIn(base, tok string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Navigate(base+"/ui/login"), chromedp.WaitVisible(`#token`),
		chromedp.SetValue(`#token`, tok), chromedp.Submit(`#token`))
}

// signInPost posts tok to the sign-in form with hc, which follows the
// answer's redirect to the page.
func signInPost(hc *http.Client, base, tok string) (*http.Response, error) {
	return hc.PostForm(base+"/ui/login", url.Values{"token": {tok}})
}

// signInRefused signs in to the page with tok and wants the refusal of a
// token that is not a person's: 403, person_required, no session. It
// returns the browser, which holds no session.
func signInRefused(t *testing.T, s *service, tok string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := signInPost(hc, s.url, tok)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get(server.ReasonHeader) != server.ReasonPersonRequired {
		t.Fatalf("sign-in with a token that is not a person's: %d %q", resp.StatusCode, resp.Header.Get(server.ReasonHeader))
	}
	if strings.Contains(string(b), tok) {
		t.Fatal("the refused sign-in echoes the token")
	}
	u, _ := url.Parse(s.url + "/ui")
	if len(jar.Cookies(u)) != 0 {
		t.Fatal("a refused sign-in left a session cookie")
	}
	return hc
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

type lockedBuffer = servertest.LockedBuffer

func jsonLogger(b *lockedBuffer) *slog.Logger { return servertest.JSONLogger(b) }

// call is a call in veto check's JSON form, run in the workspace.
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

// argsHash is the hash an answer binds to, of a call with args.
func argsHash(args map[string]any) string { return veto.ArgsHash(&veto.Call{Args: args}) }
