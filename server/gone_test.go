package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres/pgtest"
)

// TestEndedSessionsRefuseNoDecision ends, as a PostgreSQL restart does,
// the session of every connection veto serve keeps to its database, then
// decides: in runs whose row the service keeps (the decision's pipelined
// batch meets an ended connection) and in new runs (the load's read
// does). Each kept connection used to refuse the decision that took it
// next: 8 refusals in a row after the database was back. Now the first
// ended connection met lets the others go, and what met it is made once
// more on a new one; each call is decided once and recorded once.
func TestEndedSessionsRefuseNoDecision(t *testing.T) {
	w := newWorld(t)
	app := "veto_gone_" + filepath.Base(t.TempDir()) // names the sessions this test ends, and no other
	st := configuredPG(t, func(cfg *pgx.ConnConfig) { cfg.RuntimeParams["application_name"] = app })
	s := start(t, w, st, "postgres", nil)
	tok := s.token("agent:gone")
	readme := map[string]any{"file_path": filepath.Join(s.work, "README.md")}

	// The store's connections opened and kept: runs decided side by side.
	runs := make([]string, 8)
	calls := map[string]int{} // run: the calls decided in it
	for k := range runs {
		runs[k] = fmt.Sprintf("kept%d", k)
	}
	warmUp := func(tag string) {
		t.Helper()
		errs := make(chan error, len(runs))
		for k, run := range runs {
			go func() {
				for i := range 3 {
					if err := allowed(s, tok, s.call(fmt.Sprintf("%s%d-%d", tag, k, i), run, "Read", readme)); err != nil {
						errs <- fmt.Errorf("warming run %s: %w", run, err)
						return
					}
				}
				errs <- nil
			}()
			calls[run] += 3
		}
		for range runs {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}

	admin, err := sql.Open("pgx", pgtest.Base())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, phase := range []struct {
		name string
		runs []string
	}{
		{"kept", append(append([]string{}, runs...), runs...)},
		{"new", []string{"fresh1", "fresh2", "kept0"}},
	} {
		warmUp("warm" + phase.name)
		var ended int
		if err := admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&ended); err != nil {
			t.Fatal(err)
		}
		if ended < 2 {
			t.Fatalf("%s: %d sessions ended, want every connection the store kept (several)", phase.name, ended)
		}
		refused := 0
		for i, run := range phase.runs {
			if err := allowed(s, tok, s.call(fmt.Sprintf("%s%d", phase.name, i), run, "Read", readme)); err != nil {
				refused++
				t.Errorf("%s: call %d in run %s, after %d sessions ended: %v", phase.name, i, run, ended, err)
			}
			calls[run]++
		}
		t.Logf("%s: %d sessions ended, %d of %d decisions refused after", phase.name, ended, refused, len(phase.runs))
	}

	for run, want := range calls {
		evs, err := st.Events(context.Background(), run, 0)
		if err != nil {
			t.Fatal(err)
		}
		decided := map[string]int{}
		for _, e := range evs {
			if e.Kind == veto.EventAllowed || e.Kind == veto.EventDenied {
				decided[e.CallID]++
			}
		}
		for id, n := range decided {
			if n != 1 {
				t.Errorf("run %s: call %s recorded %d times", run, id, n)
			}
		}
		if len(decided) != want {
			t.Errorf("run %s: %d calls recorded, want %d", run, len(decided), want)
		}
	}
}

// allowed posts a decision and says why it was not an allow; it reports
// through its error, never through t, so that any goroutine may call it.
func allowed(s *service, tok string, call any) error {
	b, err := json.Marshal(call)
	if err != nil {
		return err
	}
	req, err := http.NewRequest("POST", s.url+"/v1/decide", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return fmt.Errorf("%d, not JSON: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != 200 || v["verdict"] != "allow" {
		return fmt.Errorf("%d %v %v", resp.StatusCode, v["verdict"], v["reason"])
	}
	return nil
}
