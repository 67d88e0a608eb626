package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// A panic while a batch is written fails every append in it and stores
// none, and leaves the store writing: the batch's other callers are not
// left waiting, and the next append is stored. The panic is a dialect's
// (its run lock, a hook no real database has), on a real SQLite file.
func TestPanicInABatchFailsItWhole(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "veto.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	held := make(chan struct{}, 1)
	s, err := sqlstore.New(ctx, db, sqlstore.Dialect{
		Name: "sqlite",
		Migrations: []string{sqlstore.Schema("BLOB", "INTEGER", "INTEGER"), sqlstore.EgressSchema("INTEGER"),
			sqlstore.TallySchema("INTEGER"), sqlstore.ApprovalSchema("BLOB", "INTEGER", "INTEGER"), sqlstore.ActorSchema()},
		LockRun: func(_ context.Context, _ *sql.Tx, _ func(string) string, run string) error {
			switch run {
			case "first":
				held <- struct{}{}
				<-hold
			case "boom":
				panic("boom")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetGroup(sqlstore.GroupOptions{MaxBatch: 64, Writers: 1})
	yes := true
	start := func(run string) []veto.Event {
		return []veto.Event{{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Complete: &yes, Time: time.Now()}}
	}
	first := make(chan error, 1)
	go func() { first <- s.Append(ctx, "first", 1, start("first")) }()
	<-held
	runs := []string{"a", "boom", "c"}
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Append(ctx, run, 1, start(run)) }()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		if q, _ := s.Batching(); q == len(runs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch never formed")
		}
	}
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, run := range runs {
		if !errors.Is(errs[i], veto.ErrStateUnavailable) {
			t.Errorf("%s: Append = %v, want the state unavailable", run, errs[i])
		}
		if evs, err := s.Events(ctx, run, 0); err != nil || len(evs) != 0 {
			t.Errorf("%s: %d events stored (%v), want none", run, len(evs), err)
		}
	}
	if err := s.Append(ctx, "a", 1, start("a")); err != nil {
		t.Fatalf("the append after the panic: %v", err)
	}
	if q, w := s.Batching(); q != 0 || w != 0 {
		t.Fatalf("after: %d queued, %d writing", q, w)
	}
}
