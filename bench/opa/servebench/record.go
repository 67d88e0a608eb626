package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/state"
	"github.com/vetohq/veto/tools"
)

// The record floors: veto's own record of a decision, with nothing
// decided. Each is a server of its own, on the same HTTP stack, that
// reads the call as veto serve's request gives it and hands it to veto's
// gate with no rule and no policy, on the state veto serve opens (the
// SQLite file proved before each request, or the PostgreSQL pool): the
// run's row loaded, the file the Read names resolved (a decision event
// names its target), and the run's start, the decision, its observation
// and its tallies appended in one commit, as veto serve appends them. No
// token is checked, no rule run, no workspace or policy read.
//
// What veto serve spends over its record floor is its deciding; what the
// record floor spends over the insert+commit floor is veto's record, which
// keeps a run's history, its tallies and its hash chain, where that floor
// stores one row.

// recordKinds are the record floors servebench runs.
var recordKinds = []string{"record-sqlite", "record-postgres"}

// serveRecord is the record floor of kind (-floor-server record-sqlite or
// record-postgres).
func serveRecord(kind, sqlitePath, dsn string) error {
	n := state.Name{Path: sqlitePath}
	if kind == "record-postgres" {
		n = state.Name{DSN: dsn}
	}
	sv, err := state.OpenService(context.Background(), n, state.ServiceOptions{})
	if err != nil {
		return err
	}
	var read []veto.Descriptor
	for _, d := range tools.Defaults() {
		if d.Name == "Read" {
			read = append(read, d)
		}
	}
	g, err := veto.NewGate(veto.Config{Store: sv.Store, Tools: read})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/decide", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var in struct {
			CallID string         `json:"call_id"`
			Tool   string         `json:"tool"`
			Args   map[string]any `json:"args"`
			Cwd    string         `json:"cwd"`
			Run    veto.Run       `json:"run"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx := loaded.Appends(r.Context())
		release, err := sv.Acquire(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		v := g.Decide(ctx, &veto.Call{ID: in.CallID, Tool: in.Tool, Args: in.Args, Cwd: in.Cwd, Workspace: in.Cwd, Run: in.Run,
			Actor: veto.Actor{Kind: "agent", ID: "bench"}})
		release()
		if !v.Allowed {
			http.Error(w, "denied: "+v.Reason, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"verdict":"allow","call_id":%q,"seq":%d}`, v.CallID, v.Seq)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "floor: listening on http://%s\n", l.Addr())
	return http.Serve(l, mux)
}

// isRecord reports whether kind is a record floor's.
func isRecord(kind string) bool { return strings.HasPrefix(kind, "record-") }
