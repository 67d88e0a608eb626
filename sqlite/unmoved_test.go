package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/sqlite"
)

// appendingFile is a held state file, acquired for a request that only
// decides and records: its path, the file, that request's context and
// the release.
func appendingFile(t *testing.T) (string, *sqlite.File, context.Context, func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "veto.db")
	f := sqlite.OpenFile(p, sqlite.Options{Verify: true})
	t.Cleanup(func() { f.Close() })
	actx := loaded.Appends(ctx)
	release, err := f.Acquire(actx)
	must(t, err)
	return p, f, actx, release
}

// A newer veto migrates a held file in place (its marker, written to the
// WAL: the file's place and times do not move). A request that only
// decides and records is proved without the marker, and its decision is
// refused as newer by its append, which reads the marker within its
// write transaction once another connection has written, and stores
// nothing; so is a decision held with the results before it (Together).
// Any other request's proof reads the marker, and refuses it before it
// begins.
func TestAppendsRefuseASchemaMadeNewerUnderThem(t *testing.T) {
	p, f, actx, release := appendingFile(t)
	decide(t, f, "r", 2) // the kept connection's commits: nothing else written since
	before, err := f.Load(actx, "r")
	must(t, err)
	release()

	markNewer(t, p)
	release, err = f.Acquire(actx)
	if err != nil {
		t.Fatalf("a request that only appends: its proof read the marker (%v)", err)
	}
	g, err := veto.NewGate(veto.Config{Store: f})
	must(t, err)
	v := g.Decide(actx, &veto.Call{ID: "after", Tool: "Read", Run: veto.Run{Ref: "r"}})
	if v.Allowed || v.Reason != veto.ReasonStateUnavailable {
		t.Fatalf("the decision on a newer schema: %+v, want refused state_unavailable", v)
	}
	err = f.Together(actx, func(ctx context.Context) {
		if v := g.Decide(ctx, &veto.Call{ID: "held", Tool: "Read", Run: veto.Run{Ref: "r"}}); v.Allowed {
			t.Errorf("a decision held with others on a newer schema was allowed: %+v", v)
		}
	})
	wantCause(t, err, veto.CauseNewer, p)
	st, err := f.Load(actx, "r")
	must(t, err)
	release()
	if st.Next != before.Next {
		t.Fatalf("the run after the refused decisions: next %d, want %d (nothing stored)", st.Next, before.Next)
	}

	_, err = f.Acquire(ctx)
	wantCause(t, err, veto.CauseNewer, p)
}

// The same refusal reaches the store's own append, named: the cause a
// verdict and veto doctor give.
func TestAppendOnASchemaMadeNewerNamesTheCause(t *testing.T) {
	p, f, actx, release := appendingFile(t)
	defer release()
	decide(t, f, "r", 1)
	markNewer(t, p)
	st, err := f.Load(actx, "r")
	must(t, err)
	err = f.Append(actx, "r", st.Next, []veto.Event{{Seq: st.Next, Kind: veto.EventAllowed, Tool: "Read", CallID: "x"}})
	wantCause(t, err, veto.CauseNewer, p)
	// What a person would be shown of a question, kept apart from the
	// log, proves it too.
	now := time.Now()
	err = st.Approvals.Keep(actx, veto.Shown{Run: "r", CallID: "x", Tool: "Read", Asked: now, Expires: now.Add(time.Hour)})
	if !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("keeping what a question shows on a newer schema: %v, want refused", err)
	}
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseNewer {
		t.Fatalf("keeping what a question shows on a newer schema: %v, want the cause newer", err)
	}
}
