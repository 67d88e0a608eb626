package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlstore"
)

// roleStores are the stores tokens are kept in: SQLite and PostgreSQL.
func roleStores(t *testing.T) map[string]func(t *testing.T) (testStore, string) {
	return map[string]func(t *testing.T) (testStore, string){
		"sqlite": func(t *testing.T) (testStore, string) { return sqliteStore(t) },
		"postgres": func(t *testing.T) (testStore, string) {
			return pgStore(t, freshPG(t))
		},
	}
}

// TestTokenRolesOpenTheirEndpoints: each route refuses the roles it does
// not serve, 403 with its reason (on a hook endpoint, the client's
// blocking reply naming it), and takes the role it serves.
func TestTokenRolesOpenTheirEndpoints(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	hook := s.tokenAs("agent:claude-code", server.RoleAgent)
	svc := s.tokenAs("agent:ci", server.RoleService)
	person := s.tokenAs("user:ann", server.RolePerson)
	s.post("/v1/runs", svc, map[string]any{"ref": "r1", "fresh": true})
	read := s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")})
	_, sus := s.post("/v1/suspend", svc, map[string]any{"call": read, "kind": "approval"})
	pre := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"README.md"},"tool_use_id":"h1"}`, w.work)
	cases := []struct {
		name, method, path string
		body               any
		refused, allowed   string // tokens
		reason             string
	}{
		{"the hook reads no run's events", "GET", "/v1/runs/r1/events", nil, hook, svc, server.ReasonRoleRefused},
		{"the hook reads no event stream", "GET", "/v1/events?run=r1&follow=0", nil, hook, "", server.ReasonRoleRefused},
		{"the hook lists no questions", "GET", "/v1/approvals", nil, hook, person, server.ReasonRoleRefused},
		{"the hook reads no policy", "GET", "/v1/policy", nil, hook, svc, server.ReasonRoleRefused},
		{"the hook suspends nothing", "POST", "/v1/suspend", map[string]any{"call": read, "kind": "approval"}, hook, svc, server.ReasonRoleRefused},
		{"the hook resumes nothing", "POST", "/v1/resume", map[string]any{"suspension": sus["suspension"], "approved": true}, hook, svc, server.ReasonRoleRefused},
		{"the hook takes no input", "GET", "/v1/inputs/r1/c1", nil, hook, "", server.ReasonRoleRefused},
		{"the hook answers nothing", "POST", "/v1/approvals/r1/c1", map[string]any{"approve": true}, hook, "", server.ReasonPersonRequired},
		{"a person's token is not the hook's", "POST", "/v1/hooks/claude-code", pre, person, hook, server.ReasonRoleRefused},
		{"nor a command hook's", "POST", "/v1/hooks/gemini-cli/command", `{}`, person, "", server.ReasonRoleRefused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			send := func(tok string) (int, map[string]any, string) {
				var req *http.Request
				if c.method == "GET" {
					req, _ = http.NewRequest("GET", s.url+c.path, nil)
				} else {
					body := ""
					switch b := c.body.(type) {
					case string:
						body = b
					default:
						body = mustJSON(t, b)
					}
					req, _ = http.NewRequest("POST", s.url+c.path, strings.NewReader(body))
				}
				req.Header.Set("Authorization", "Bearer "+tok)
				// A stream let through would never end: the refusal is due at once.
				ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
				defer cancel()
				code, m := s.do(req.WithContext(ctx))
				return code, m, fmt.Sprint(m)
			}
			code, m, text := send(c.refused)
			hookRoute := strings.HasPrefix(c.path, "/v1/hooks/")
			switch {
			case hookRoute && (code != 200 || !strings.Contains(text, c.reason)):
				t.Fatalf("refused: %d %v, want 200 and a blocking reply naming %s", code, m, c.reason)
			case !hookRoute && (code != 403 || m["reason"] != c.reason):
				t.Fatalf("refused: %d %v, want 403 %s", code, m, c.reason)
			}
			if c.allowed == "" {
				return
			}
			if code, m, text := send(c.allowed); code != 200 || strings.Contains(text, "role_refused") || strings.Contains(text, "person_required") {
				t.Fatalf("allowed: %d %v", code, m)
			}
		})
	}
}

// TestTokenRoleMustFitTheActor: only a user holds a person's token, a
// hook's token acts as an agent, a service never acts as a person.
func TestTokenRoleMustFitTheActor(t *testing.T) {
	cases := []struct {
		actor string
		role  server.Role
		ok    bool
	}{
		{"user:ann", server.RolePerson, true},
		{"agent:claude-code", server.RolePerson, false},
		{"service:w", server.RolePerson, false},
		{"agent:claude-code", server.RoleAgent, true},
		{"user:ann", server.RoleAgent, false},
		{"service:w", server.RoleAgent, false},
		{"service:w", server.RoleService, true},
		{"schedule:nightly", server.RoleService, true},
		{"agent:ci", server.RoleService, true},
		{"user:ann", server.RoleService, false},
		{"user:ann", server.RoleLegacy, false},
		{"user:ann", "admin", false},
	}
	for _, c := range cases {
		a, _ := server.ParseActor(c.actor)
		if err := server.CheckRole(c.role, a); (err == nil) != c.ok {
			t.Errorf("%s as %q: %v, want ok %v", c.actor, c.role, err, c.ok)
		}
	}
	st, d := sqliteStore(t)
	toks, err := server.OpenTokens(context.Background(), sqlstore.NewTokens(st.DB, d))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := toks.Create(context.Background(), veto.Actor{Kind: "user", ID: "ann"}, server.RoleAgent, time.Now()); err == nil {
		t.Fatal("a hook's token for a user was made")
	}
	if list, _ := toks.List(context.Background()); len(list) != 0 {
		t.Fatalf("a refused token was stored: %v", list)
	}
}

// TestTokenTableMigratesLegacyRows: a token table made before roles gets
// the column, in SQLite and PostgreSQL; its rows read legacy and keep
// working for what a hook's token may do (decide), and for nothing a
// person does.
func TestTokenTableMigratesLegacyRows(t *testing.T) {
	for name, open := range roleStores(t) {
		t.Run(name, func(t *testing.T) {
			st, d := open(t)
			secret := legacyToken(t, st.DB(), d, "service:old")
			toks, err := server.OpenTokens(context.Background(), sqlstore.NewTokens(st.DB, d))
			if err != nil {
				t.Fatal(err)
			}
			// A second instance migrating the same table is a no-op.
			if _, err := server.OpenTokens(context.Background(), sqlstore.NewTokens(st.DB, d)); err != nil {
				t.Fatal(err)
			}
			tok, ok, err := toks.Verify(context.Background(), secret)
			if err != nil || !ok || tok.Role != server.RoleLegacy || tok.Actor.ID != "old" {
				t.Fatalf("the legacy token: %+v %v %v", tok, ok, err)
			}
			list, _ := toks.List(context.Background())
			if len(list) != 1 || list[0].Role.Shown() != "legacy" {
				t.Fatalf("list: %+v", list)
			}
			_, fresh, err := toks.Create(context.Background(), veto.Actor{Kind: "user", ID: "ann"}, server.RolePerson, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if tok, ok, _ := toks.Verify(context.Background(), fresh); !ok || tok.Role != server.RolePerson {
				t.Fatalf("a new token after the migration: %+v", tok)
			}
			w := newWorld(t)
			s := start(t, w, st, d, nil)
			read := s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")})
			if code, m := s.post("/v1/decide", secret, read); code != 200 || m["verdict"] != "allow" {
				t.Fatalf("the legacy token decides: %d %v", code, m)
			}
			if code, m := s.get("/v1/runs/r1/events", secret); code != 403 || m["reason"] != server.ReasonRoleRefused {
				t.Fatalf("the legacy token reads a run: %d %v", code, m)
			}
		})
	}
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
	if _, err := db.Exec(q, "tok_legacy"+id, server.HashSecret(secret), kind, id, time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	return secret
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
