// Command floorserve is the server floorask asks: it reads each event to
// its end and answers "{}", with nothing decided. With a state file it
// first inserts one row of a decision event's stored bytes (600), keyed
// (run, seq) as veto's events are, and commits it, through veto's SQLite
// driver with veto's settings (WAL, synchronous=NORMAL, secure_delete,
// BEGIN IMMEDIATE): the least a server that records each decision durably
// does before it answers. With "record" after the state it records the
// event as veto does instead, with nothing decided: veto's gate with no
// rule and no policy, only the tools' descriptors (a decision event names
// its target), on the state file as a long-lived veto holds it (proved
// before each event): the run's start, the decision, its observation and
// its tallies in one commit.
//
//	floorserve SOCKET [STATE [record]]
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/bench/internal/floordb"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/state"
	"github.com/vetohq/veto/tools"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 4 || len(os.Args) == 4 && os.Args[3] != "record" {
		fmt.Fprintln(os.Stderr, "usage: floorserve SOCKET [STATE [record]]")
		os.Exit(64)
	}
	var db *sql.DB
	var rec *recorder
	if len(os.Args) == 4 {
		var err error
		if rec, err = newRecorder(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "floorserve:", err)
			os.Exit(1)
		}
	} else if len(os.Args) == 3 {
		var err error
		if db, err = floordb.Open(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "floorserve:", err)
			os.Exit(1)
		}
	}
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorserve:", err)
		os.Exit(1)
	}
	var seq atomic.Int64
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			if rec != nil {
				ev, err := io.ReadAll(c)
				if err != nil || rec.record(ev) != nil {
					return
				}
			} else if _, err := io.Copy(io.Discard, c); err != nil {
				return
			}
			if db != nil {
				if err := floordb.Commit(context.Background(), db, seq.Add(1)); err != nil {
					return // no answer: floorask fails, and the bench with it
				}
			}
			io.WriteString(c, "{}")
		}()
	}
}

// recorder records hook events as veto does, with nothing decided.
type recorder struct {
	sv *state.Service
	g  *veto.Gate
}

func newRecorder(path string) (*recorder, error) {
	sv, err := state.OpenService(context.Background(), state.Name{Path: path}, state.ServiceOptions{})
	if err != nil {
		return nil, err
	}
	g, err := veto.NewGate(veto.Config{Store: sv.Store, Tools: tools.Defaults()})
	if err != nil {
		return nil, err
	}
	return &recorder{sv: sv, g: g}, nil
}

// record records the Claude Code PreToolUse event ev's call; an error, or
// a call the gate did not allow, fails the answer.
func (r *recorder) record(ev []byte) error {
	var e struct {
		Session string         `json:"session_id"`
		Cwd     string         `json:"cwd"`
		Tool    string         `json:"tool_name"`
		Input   map[string]any `json:"tool_input"`
		ID      string         `json:"tool_use_id"`
	}
	if err := json.Unmarshal(ev, &e); err != nil {
		return err
	}
	ctx := loaded.Appends(context.Background())
	release, err := r.sv.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	// Each call is new to the run: the bench sends the same events again.
	id := fmt.Sprintf("%s-%d", e.ID, calls.Add(1))
	v := r.g.Decide(ctx, &veto.Call{ID: id, Tool: e.Tool, Args: e.Input, Cwd: e.Cwd, Workspace: e.Cwd,
		Run: veto.Run{Ref: "floor-" + e.Session, Fresh: true}, Actor: veto.Actor{Kind: "agent", ID: "claude-code"}})
	if !v.Allowed {
		return fmt.Errorf("floorserve: %s refused: %s", e.Tool, v.Reason)
	}
	return nil
}

var calls atomic.Int64
