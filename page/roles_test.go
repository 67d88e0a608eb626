package page_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlstore"
)

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

// roleStores are the stores tokens are kept in: SQLite and PostgreSQL.
func roleStores(t *testing.T) map[string]func(t *testing.T) (*sqlstore.Store, string) {
	return map[string]func(t *testing.T) (*sqlstore.Store, string){
		"sqlite":   func(t *testing.T) (*sqlstore.Store, string) { return sqliteStore(t) },
		"postgres": func(t *testing.T) (*sqlstore.Store, string) { return pgStore(t, freshPG(t)) },
	}
}

// hashSecret is how the token table keeps a secret (its SHA-256, hex).
func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// legacyToken stores a token as veto did before roles, in a table of that
// shape when there is none yet, and returns its secret.
func legacyToken(t *testing.T, db *sql.DB, dialect, actor string) string {
	t.Helper()
	ph := func(n int) string {
		if dialect == "postgres" {
			return fmt.Sprintf("$%d", n)
		}
		return "?"
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS veto_tokens (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE,
		actor_kind TEXT NOT NULL, actor_id TEXT NOT NULL, created BIGINT NOT NULL, revoked BIGINT NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	kind, id, _ := strings.Cut(actor, ":")
	secret := "veto_legacy" + strings.ReplaceAll(id, ":", "")
	q := fmt.Sprintf(`INSERT INTO veto_tokens (id, hash, actor_kind, actor_id, created) VALUES (%s, %s, %s, %s, %s)`, ph(1), ph(2), ph(3), ph(4), ph(5))
	if _, err := db.Exec(q, "tok_legacy"+id, hashSecret(secret), kind, id, time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestOnlyAPersonAnswers: the attack of issue 26 over HTTP. The hook's
// token (an agent's), a service's and a legacy one cannot answer the
// agent's own question (403 person_required), sign in to the page (403
// person_required), or so give input; a person's token does each. The
// question stays open after every refusal, and the call asked again is
// asked again, not allowed.
func TestOnlyAPersonAnswers(t *testing.T) {
	for name, open := range roleStores(t) {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			st, d := open(t)
			s := start(t, w, st, d, nil)
			hook := s.tokenAs("agent:claude-code", server.RoleAgent)
			svc := s.tokenAs("service:worker", server.RoleService)
			legacy := legacyToken(t, st.DB(), d, "user:old")
			person := s.tokenAs("user:ann", server.RolePerson)

			deploy := s.call("c1", "r1", "Bash", map[string]any{"command": "make deploy"})
			s.post("/v1/runs", hook, map[string]any{"ref": "r1", "fresh": true})
			if _, m := s.post("/v1/decide", hook, deploy); m["verdict"] != "ask" {
				t.Fatalf("the hook's call: %v, want ask", m)
			}
			for who, tok := range map[string]string{"the hook's token": hook, "a service's token": svc, "a legacy token": legacy} {
				code, m := s.post("/v1/approvals/r1/c1", tok, map[string]any{"approve": true, "args_hash": argsHash(map[string]any{"command": "make deploy"})})
				if code != 403 || m["reason"] != server.ReasonPersonRequired {
					t.Fatalf("%s answered: %d %v", who, code, m)
				}
				if _, m := s.post("/v1/decide", hook, deploy); m["verdict"] != "ask" {
					t.Fatalf("after %s's answer, the call is %v, want ask again", who, m)
				}
				hc := signInRefused(t, s, tok)
				if code, _ := getPage(t, hc, s.url+"/ui"); code != 401 {
					t.Fatalf("%s: the page without a session: %d", who, code)
				}
			}
			// The allowed form: a person's token answers, and signs in.
			if code, m := s.post("/v1/approvals/r1/c1", person, map[string]any{"approve": true, "args_hash": argsHash(map[string]any{"command": "make deploy"})}); code != 200 {
				t.Fatalf("the person's answer: %d %v", code, m)
			}
			if _, m := s.post("/v1/decide", hook, deploy); m["verdict"] != "allow" {
				t.Fatalf("the approved call: %v", m)
			}
			pageSession(t, s, person)
		})
	}
}

// TestPersonGivesInputOnlyOnThePage: a call suspended for input takes
// values only from a person's session: a service's token signs in to
// nothing (403 person_required) and its post has no session (401); the
// person's post is taken (303) and the runtime reads the values.
func TestPersonGivesInputOnlyOnThePage(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	svc, person := s.token("service:worker"), s.token("user:ann")
	c := s.call("c1", "r1", "Bash", map[string]any{"command": "ls"})
	if code, m := s.post("/v1/suspend", svc, map[string]any{"call": c, "kind": "input", "fields": []string{"command"}}); code != 200 {
		t.Fatalf("suspend: %d %v", code, m)
	}
	refused := signInRefused(t, s, svc)
	if code, _ := postForm(t, refused, s.url+"/ui/inputs/r1/c1", url.Values{"in.command": {"pwd"}}, nil); code != 401 {
		t.Fatalf("a service's input: %d, want 401", code)
	}
	hc, page := pageSession(t, s, person)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the person's page")
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if code, body := postForm(t, hc, s.url+"/ui/inputs/r1/c1", url.Values{"csrf": {m[1]}, "in.command": {"pwd"}}, nil); code != 303 {
		t.Fatalf("the person's input: %d\n%s", code, body)
	}
	if code, got := s.take("r1", "c1", svc, ""); code != 200 || fmt.Sprint(got["input"]) != "map[command:pwd]" {
		t.Fatalf("take: %d %v", code, got)
	}
}
