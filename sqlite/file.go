package sqlite

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/sqlstore"
)

// File is a state file kept open by a long-lived process (the hook
// server). SQLite keeps pages in memory and would go on answering, and
// writing, after the file under it was truncated, overwritten or had pages
// damaged while its inode stayed the same. So before each use (Acquire)
// File proves that the file it holds is the file at the path, unchanged
// since it was last verified (device, inode, size, modification and change
// times), and that veto's schema marker is one this veto knows. When
// anything moved it closes the store, opens the file again (the header
// checks of Open, veto's schema marker, SQLite's quick_check) and refuses
// until the file is sound.
//
// File is a veto.Store for the gate that holds it; a store failure is
// noted, with its cause, in the context's sqlstore.Causes.
type File struct {
	path string
	o    Options

	rw    sync.RWMutex // read: a request uses s; write: s is replaced, or checkpointed
	s     *sqlstore.Store
	fp    fingerprint
	walFP fingerprint // the WAL as the last checkpoint left it
	// ckptAfter: no checkpoint before then, the last one having been
	// unable to copy the whole WAL (another process reading it).
	ckptAfter time.Time
	err       error // why s is nil
	opens     int64 // verified opens, for tests
	closed    bool  // by Close: never opened again
}

// errClosed refuses a request made after Close: the file is not opened
// again (a record made late, after a test's or a service's end, would
// create the state file's WAL in a directory being removed).
var errClosed = errors.New("sqlite: the state file is closed")

var _ veto.Store = (*File)(nil)

// fingerprint is what identifies a file and tells that it moved.
type fingerprint struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

func stat(path string) (fingerprint, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fingerprint{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fingerprint{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
	}
	return fingerprint{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), mtime: fi.ModTime().UnixNano(),
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}, nil
}

// OpenFile returns the state file at path; it is opened at the first
// Acquire. With o.Verify the file is verified (quick_check) whenever it is
// opened, and the store makes its own checkpoints (see Acquire).
func OpenFile(path string, o Options) *File {
	o.ownCheckpoints = o.Verify
	return &File{path: path, o: o}
}

// checkpointAt is the WAL size past which a File copies the WAL into the
// database (SQLite's own default is 1000 pages). It is also the size the
// WAL is cut back to when it starts again (journal_size_limit, in the
// DSN): the WAL keeps its blocks, and each frame overwrites one where
// appending would grow the file (1.1-1.6 µs a page where growing takes
// 3.8 here, two writes a frame, about nine frames a decision). A
// checkpoint holds the process's requests through three fsyncs: at
// 16 MiB it comes every ~450 decisions, out of one run's p99 (at 4 MiB,
// every ~110, it was that p99). A test of two processes shortens it in
// its children.
var checkpointAt int64 = 16 << 20

// Verifications is how many times the file was opened and verified.
func (f *File) Verifications() int64 {
	f.rw.RLock()
	defer f.rw.RUnlock()
	return f.opens
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Acquire proves the file sound, reopening it when anything moved, and
// holds it open until release is called; err (a *veto.StateError)
// refuses it.
//
// A store that verifies (Options.Verify) makes its own checkpoints: when
// its WAL has grown past checkpointAt, under the write lock, once the file
// is proved unmoved, and the file's new size and times are then its
// fingerprint. A checkpoint made by another process moves the file, and
// the file is verified again.
func (f *File) Acquire(ctx context.Context) (release func(), err error) {
	f.rw.RLock()
	if f.s != nil && f.soundOrUnlock(ctx) && !f.walFull() {
		return f.rw.RUnlock, nil
	}
	f.rw.RUnlock()

	if err := f.proveHeld(ctx); err != nil {
		return nil, err
	}
	// Another request may replace the store between these locks: it then
	// proved the new one sound, and this request checks again.
	f.rw.RLock()
	if f.s == nil {
		err := f.err
		f.rw.RUnlock()
		return nil, err
	}
	return f.rw.RUnlock, nil
}

// soundOrUnlock is sound for a caller holding the read lock, which a
// panic in it (a driver's bug) gives back before it goes on: held, it
// kept every later reopen, checkpoint and Close waiting for good.
func (f *File) soundOrUnlock(ctx context.Context) bool {
	proved := false
	defer func() {
		if !proved {
			f.rw.RUnlock()
		}
	}()
	ok := f.sound(ctx)
	proved = true
	return ok
}

// proveHeld proves the file sound under the write lock, reopening it when
// anything moved, or checkpoints it; the lock is given back on every way
// out, a panic's included. It returns why the file is refused.
func (f *File) proveHeld(ctx context.Context) error {
	f.rw.Lock()
	defer f.rw.Unlock()
	if f.closed {
		return errClosed
	}
	if f.s == nil || !f.sound(ctx) {
		f.reopen(ctx)
	} else if f.walFull() {
		f.checkpoint(ctx)
	}
	if f.s == nil {
		return f.err
	}
	return nil
}

// sound reports whether the open store is still the file at the path,
// unmoved, with a schema this veto knows. A newer schema is refused. For
// a request that only decides and records (loaded.Appending), the schema
// is proved by its appends, within the transaction that writes (see
// sqlstore's unmoved.go), and is not read here.
func (f *File) sound(ctx context.Context) bool {
	fp, err := stat(f.path)
	if err != nil || fp != f.fp {
		return false
	}
	if loaded.Appending(ctx) {
		return true
	}
	_, err = f.s.MigrationsUnwatched(ctx)
	return err == nil
}

// walFull reports whether the store should checkpoint its WAL: it is
// past checkpointAt, and its size is not the one the last checkpoint
// left it (the WAL keeps that size until a write starts it again and
// grows it past, or this store's first write cuts it back). Its times are
// not compared: another process's writes, starting it again within its
// blocks, would have each request checkpoint an already copied WAL.
func (f *File) walFull() bool {
	if !f.o.ownCheckpoints {
		return false
	}
	fp, err := stat(f.path + "-wal")
	return err == nil && fp.size > checkpointAt && fp.size != f.walFP.size && time.Now().After(f.ckptAfter)
}

// ckptBackoff is how long a store waits after a checkpoint that could not
// copy the whole WAL before it tries again (each one syncs the file).
const ckptBackoff = time.Second

// checkpoint copies the WAL into the database, under the write lock, the
// file proved unmoved just before; what it moved is the fingerprint. It
// waits for no one (PASSIVE): no request of this process reads while it
// holds the lock, and one of another process's (veto log, say) is not
// waited for, where RESTART would hold every request for up to the busy
// timeout. Once the whole WAL is copied, the next write starts it again
// from its beginning, and cuts it back to checkpointAt.
func (f *File) checkpoint(ctx context.Context) {
	var busy, frames, copied int
	if err := f.s.DB().QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		return // tried again at the next request
	}
	if busy != 0 || copied < frames {
		f.ckptAfter = time.Now().Add(ckptBackoff)
	}
	if fp, err := stat(f.path); err == nil {
		f.fp = fp
	}
	if fp, err := stat(f.path + "-wal"); err == nil {
		f.walFP = fp
	}
}

// reopen closes the store and opens the file again, verified; under the
// write lock.
//
// The file is opened again before the store held is closed, so that a
// damaged file is marked (see mark) before closing lets SQLite copy its
// WAL's pages into it.
func (f *File) reopen(ctx context.Context) {
	s, err := open(ctx, f.path, f.o)
	if err != nil {
		f.err = refusal(f.path, err)
		mark(f.path, f.err)
	}
	if f.s != nil {
		f.s.Close()
		f.s = nil
	}
	if err != nil {
		return
	}
	fp, err := stat(f.path)
	if err != nil {
		s.Close()
		f.err = refusal(f.path, err)
		return
	}
	f.s, f.fp, f.err = s, fp, nil
	f.opens++
}

// Close closes the store.
func (f *File) Close() error {
	f.rw.Lock()
	defer f.rw.Unlock()
	f.closed = true
	if f.s == nil {
		f.err = errClosed
		return nil
	}
	err := f.s.Close()
	f.s, f.err = nil, errClosed
	return err
}

// store is the open store, nil when refused (the caller holds Acquire).
func (f *File) store() (*sqlstore.Store, error) {
	if f.s == nil {
		if f.err == nil {
			return nil, refusal(f.path, errors.New("not opened"))
		}
		return nil, f.err
	}
	return f.s, nil
}

// failed is err as a StateError of this file, which the gate names in
// its refusal; an append that lost to another writer is veto.Contended
// (still veto.ErrConflict: the gate decides again, and names it if it
// gives up).
func (f *File) failed(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, veto.ErrConflict) {
		return veto.Contended(f.path)
	}
	return refusal(f.path, err)
}

// Load implements veto.Store.
func (f *File) Load(ctx context.Context, run string) (veto.RunState, error) {
	s, err := f.store()
	if err != nil {
		return veto.RunState{}, f.failed(err)
	}
	st, err := s.Load(ctx, run)
	return st, f.failed(err)
}

// Append implements veto.Store.
func (f *File) Append(ctx context.Context, run string, next uint64, events []veto.Event) error {
	s, err := f.store()
	if err != nil {
		return f.failed(err)
	}
	return f.failed(s.Append(ctx, run, next, events))
}

// Together runs fn with one write transaction held for it
// (sqlstore.Store.Together): its appends are stored in one commit, or
// none is, and its error is that commit's. The caller holds Acquire. A
// file refused now runs fn as it would alone, and its calls are refused.
func (f *File) Together(ctx context.Context, fn func(ctx context.Context)) error {
	s, err := f.store()
	if err != nil {
		fn(ctx)
		return nil
	}
	return f.failed(s.Together(ctx, fn))
}

// Events implements veto.Store.
func (f *File) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	s, err := f.store()
	if err != nil {
		return nil, f.failed(err)
	}
	evs, err := s.Events(ctx, run, after)
	return evs, f.failed(err)
}

// Decided returns the decision recorded for the call callID of run
// (sqlstore.Store.Decided).
func (f *File) Decided(ctx context.Context, run, callID string) (veto.Event, bool, error) {
	s, err := f.store()
	if err != nil {
		return veto.Event{}, false, f.failed(err)
	}
	e, ok, err := s.Decided(ctx, run, callID)
	return e, ok, f.failed(err)
}

// Store is the open store, for what is not on veto.Store (the caller
// holds Acquire); nil when refused.
func (f *File) Store() *sqlstore.Store { return f.s }
