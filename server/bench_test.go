package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
)

// BenchmarkDecideSQLite is one allowed Read decided over HTTP by a
// service on a real SQLite state: the token check (cached), the decision,
// its durable record and the JSON both ways. go test -bench Decide
// -cpuprofile shows where the time goes; bench/opa/servebench compares
// whole processes with OPA's server.
func BenchmarkDecideSQLite(b *testing.B) {
	w := newWorld(b)
	st, d := sqliteStore(b)
	s := start(b, w, st, d, nil)
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
