package state_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/state"
)

// dsnCanary is a password in a DSN: it names the state in no message.
const dsnCanary = "CANARY-dsn-pw-7f3a"

// Every opening refuses a state it cannot use with a *veto.StateError
// naming the cause and the state (a file's path; a database as "in
// PostgreSQL", never its DSN), through the error chain.
func TestOpeningsRefuseWithTheCause(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	down := state.Name{DSN: "postgres://veto:" + dsnCanary + "@127.0.0.1:1/veto?connect_timeout=1"}
	cache := state.NewCache(time.Second)
	defer cache.Close()
	for _, tc := range []struct {
		name   string
		n      state.Name
		cause  veto.Cause
		reason string
	}{
		{"damaged file", state.Name{Path: empty}, veto.CauseDamaged, "veto's state " + empty + " is damaged"},
		{"a directory", state.Name{Path: dir}, veto.CauseBadPath, "is not a usable path"},
		{"database down", down, veto.CauseUnreachable, "veto's state in PostgreSQL cannot be reached"},
	} {
		opens := map[string]func() error{
			"Once":  func() error { _, _, err := state.Once(ctx, tc.n, time.Second); return err },
			"Cache": func() error { _, _, err := cache.Open(ctx, tc.n); return err },
			"OpenService": func() error {
				_, err := state.OpenService(ctx, tc.n, state.ServiceOptions{Connect: time.Second})
				return err
			},
			"OpenDurable": func() error {
				_, err := state.OpenDurable(ctx, tc.n, state.DurableOptions{Verify: true, Busy: time.Second})
				return err
			},
		}
		for how, open := range opens {
			err := open()
			se := veto.StateErrorOf(err)
			if se == nil || se.Cause != tc.cause || !strings.Contains(se.Reason(), tc.reason) || !errors.Is(err, veto.ErrStateUnavailable) {
				t.Errorf("%s, %s: %v, want cause %s saying %q", tc.name, how, err, tc.cause, tc.reason)
				continue
			}
			if strings.Contains(se.Reason(), dsnCanary) || strings.Contains(state.Cause(err), dsnCanary) {
				t.Errorf("%s, %s: the reason names the DSN: %q", tc.name, how, se.Reason())
			}
		}
	}
}

// A lazily opened service starts on a state it cannot use yet: no error,
// the cause kept as StartErr, and every decision refused with it, its
// message naming the cause, until the state mends.
func TestLazyServiceStartsAndRefusesWithTheCause(t *testing.T) {
	ctx := context.Background()
	empty := filepath.Join(t.TempDir(), "veto.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sv, err := state.OpenService(ctx, state.Name{Path: empty}, state.ServiceOptions{Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	if se := veto.StateErrorOf(sv.StartErr); se == nil || se.Cause != veto.CauseDamaged {
		t.Fatalf("StartErr %v, want the damage", sv.StartErr)
	}
	g, err := veto.NewGate(veto.Config{Store: sv.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Acquire(ctx); veto.StateErrorOf(err) == nil {
		t.Fatalf("Acquire on a damaged state: %v", err)
	}
	v := g.Decide(ctx, &veto.Call{Tool: "Read"})
	if v.Allowed || v.Reason != veto.ReasonStateUnavailable || !strings.Contains(v.Message, "veto's state "+empty+" is damaged") {
		t.Fatalf("%s %q, want state_unavailable naming the damage", v.Reason, v.Message)
	}
	// The file mended (moved aside, a new one in its place): the next
	// request is decided.
	if err := os.Remove(empty); err != nil {
		t.Fatal(err)
	}
	release, err := sv.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire after the repair: %v", err)
	}
	v = g.Decide(ctx, &veto.Call{Tool: "Read"})
	release()
	if v.Reason == veto.ReasonStateUnavailable {
		t.Fatalf("still refused after the repair: %q", v.Message)
	}
}

// One state, two ways of naming it: the same PostgreSQL database is the
// store of Once, of the hook server's cache and of a service, and a
// decision recorded through one is read through the others.
func TestOneDatabaseThroughEveryOpening(t *testing.T) {
	ctx := context.Background()
	n := state.Name{DSN: pgtest.Fresh(t)}
	s, done, err := state.Once(ctx, n, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	v := g.Decide(ctx, &veto.Call{ID: "c1", Tool: "Read", Run: veto.Run{Ref: "r1", Fresh: true}})
	done()
	if v.Seq == 0 {
		t.Fatalf("not recorded: %+v", v)
	}
	cache := state.NewCache(5 * time.Second)
	defer cache.Close()
	cs, release, err := cache.Open(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := cs.Events(ctx, "r1", 0)
	release()
	if err != nil || len(evs) == 0 || evs[len(evs)-1].CallID != "c1" {
		t.Fatalf("the cache's store: %d events, %v", len(evs), err)
	}
	sv, err := state.OpenService(ctx, n, state.ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	if runs, err := sv.Log.Runs(ctx); err != nil || len(runs) != 1 || runs[0] != "r1" || sv.Dialect() != "postgres" {
		t.Fatalf("the service's log: %v %v (%s)", runs, err, sv.Dialect())
	}
}

// TestServiceTokensLiveInTheState: a service's tokens are kept in its
// state, SQLite file or PostgreSQL database: one made by one opening (veto
// token create) is live in the next (veto serve), and a lazily opened
// PostgreSQL service that cannot reach its database refuses a lookup
// with veto.ErrStateUnavailable rather than answering none.
func TestServiceTokensLiveInTheState(t *testing.T) {
	ctx := context.Background()
	names := map[string]state.Name{
		"sqlite":   {Path: filepath.Join(t.TempDir(), "veto.db")},
		"postgres": {DSN: pgtest.Fresh(t)},
	}
	for kind, n := range names {
		t.Run(kind, func(t *testing.T) {
			rec := veto.TokenRecord{ID: "tok_1", Hash: "h1", Actor: veto.Actor{Kind: "agent", ID: "ci"}, Role: "agent", Created: time.Unix(1_800_000_000, 0).UTC()}
			for i, want := range []bool{false, true} {
				sv, err := state.OpenService(ctx, n, state.ServiceOptions{})
				if err != nil {
					t.Fatal(err)
				}
				release, err := sv.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok, err := sv.Tokens().LiveToken(ctx, "h1"); ok != want || err != nil {
					t.Fatalf("opening %d: live %v %v, want %v", i, ok, err, want)
				}
				if i == 0 {
					if err := sv.Tokens().AddToken(ctx, rec); err != nil {
						t.Fatal(err)
					}
				}
				release()
				sv.Close()
			}
		})
	}
	down := state.Name{DSN: "postgres://veto:" + dsnCanary + "@127.0.0.1:1/veto?connect_timeout=1"}
	sv, err := state.OpenService(ctx, down, state.ServiceOptions{Lazy: true, Connect: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	if _, ok, err := sv.Tokens().LiveToken(ctx, "h1"); ok || !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("tokens of a database down: %v %v, want ErrStateUnavailable", ok, err)
	}
}
