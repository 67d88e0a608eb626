package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/server"
)

// memLog is the in-memory store with a log that holds nothing: the
// benchmark reads no log.
type memLog struct{ *memstore.Store }

func (memLog) Runs(context.Context) ([]string, error) { return nil, nil }
func (memLog) Scan(context.Context, veto.LogQuery, func(string, uint64, []byte) error) error {
	return nil
}
func (memLog) Chain(context.Context, string) (uint64, string, [][]byte, error) {
	return 1, "", nil, nil
}
func (memLog) Prune(context.Context, time.Time) (int, error) { return 0, nil }

// BenchmarkDecideSQLite is one allowed Read decided over HTTP by a
// service on a real SQLite state: the token check (cached), the decision,
// its durable record and the JSON both ways. go test -bench Decide
// -cpuprofile shows where the time goes; bench/opa/servebench compares
// whole processes with OPA's server.
func BenchmarkDecideSQLite(b *testing.B) {
	w := newWorld(b)
	st, d := sqliteStore(b)
	s := start(b, w, st, d, nil)
	benchDecide(b, s, w)
}

func benchDecide(b *testing.B, s *service, w world) {
	tok := s.token("agent:bench")
	target := filepath.Join(w.work, "README.md")
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	i := 0
	for b.Loop() {
		i++
		body := fmt.Sprintf(`{"call_id":"c%d","tool":"Read","args":{"file_path":%q},"cwd":%q,"run":{"ref":"bench","fresh":true}}`, i, target, w.work)
		req, _ := http.NewRequest("POST", s.url+"/v1/decide", bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"allow"`)) {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
	}
}

// BenchmarkDecideMemory is the same over the in-memory store: the HTTP,
// the token, the decision and the JSON, with nothing made durable. The
// difference from BenchmarkDecideSQLite is the durable record's cost.
func BenchmarkDecideMemory(b *testing.B) {
	w := newWorld(b)
	st, d := sqliteStore(b) // the token table
	mem := memstore.New()
	s := start(b, w, st, d, func(c *server.Config) {
		cel, _ := celrule.New()
		p, err := policy.Load(policy.LoadOptions{FlagPath: w.policy, Compiler: cel})
		if err != nil {
			b.Fatal(err)
		}
		g, err := p.Gate(policy.BuildOptions{Store: mem, Home: w.home})
		if err != nil {
			b.Fatal(err)
		}
		c.Gate, c.Store = g, memLog{mem}
	})
	benchDecide(b, s, w)
}
