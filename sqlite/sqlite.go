// Package sqlite is veto's embedded store: one SQLite file (by default
// $XDG_STATE_HOME/veto/veto.db), through the pure-Go modernc.org/sqlite
// driver so builds stay CGO_ENABLED=0. Writers from many processes take
// the database's write lock for one transaction each (BEGIN IMMEDIATE),
// wait for it up to the busy timeout, and fail closed past it.
//
// A file that exists is a veto database or it is refused: an empty file,
// one cut short, one that does not start with SQLite's header, one without
// veto's schema marker, or one SQLite finds malformed is damaged, never
// new. A new file is built aside and linked into place whole, so no
// process ever sees a half-made one.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// Options tune the store.
type Options struct {
	// BusyTimeout is how long a writer waits for another's lock before the
	// store reports itself unavailable; zero means 2 seconds.
	BusyTimeout time.Duration
	// Verify runs SQLite's quick_check when the file is opened: every
	// page's structure is read, so damage anywhere is refused, not only
	// where a decision reads. It costs time in proportion to the file.
	Verify bool

	// ownCheckpoints turns SQLite's automatic checkpoints off: File makes
	// them itself, so that its own do not count as the file moving.
	ownCheckpoints bool
}

var dialect = sqlstore.Dialect{
	Name: "sqlite",
	// A decision in a run this store appended to a moment ago reads its
	// row once, under the append's write lock, not also at the load.
	OwnRows: true,
	// Unchanged on the appends' connection, nothing but its own appends
	// wrote since its last (sqlstore's unmoved.go).
	DataVersion: "PRAGMA data_version",
	// BEGIN IMMEDIATE takes the write lock (_txlock, in the DSN); in WAL
	// mode nothing an append runs after it waits for a lock.
	LockAtBegin: true,
	Migrations:  []string{sqlstore.Schema("BLOB", "INTEGER", "INTEGER"), sqlstore.EgressSchema("INTEGER"), sqlstore.TallySchema("INTEGER"), sqlstore.ApprovalSchema("BLOB", "INTEGER", "INTEGER"), sqlstore.ActorSchema()},
	// Deleted rows are overwritten (secure_delete, in the DSN); the WAL
	// still holds the frames that wrote them until it is checkpointed
	// and truncated.
	Scrub: func(ctx context.Context, db *sql.DB) error {
		var busy, frames, copied int
		if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &copied); err != nil {
			return err
		}
		if busy != 0 {
			return errors.New("sqlite: the WAL is in use and was not truncated")
		}
		return nil
	},
	Conflict: func(err error) bool {
		// Another writer stored the key first: the events' primary key
		// (run, seq) or a unique column. Busy is not a conflict: past the
		// busy timeout the store is unavailable.
		var se *sqlite.Error
		if !errors.As(err, &se) {
			return false
		}
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return true
		}
		return false
	},
}

// DefaultPath is where the embedded store lives: $XDG_STATE_HOME/veto/veto.db,
// else ~/.local/state/veto/veto.db.
func DefaultPath() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "veto", "veto.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", &veto.StateError{Cause: veto.CauseBadPath, Detail: "no home directory for the default state", Err: err}
	}
	return filepath.Join(home, ".local", "state", "veto", "veto.db"), nil
}

// Open opens (creating when missing, with its schema) the store at path.
// The directory is created readable by its user only, the file is 0600.
// Every error is a *veto.StateError naming its cause.
func Open(ctx context.Context, path string, o Options) (*sqlstore.Store, error) {
	s, err := open(ctx, path, o)
	if err != nil {
		err = refusal(path, err)
		mark(path, err)
		return nil, err
	}
	return s, nil
}

func open(ctx context.Context, path string, o Options) (*sqlstore.Store, error) {
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 2 * time.Second
	}
	if path == "" {
		return nil, &veto.StateError{Cause: veto.CauseBadPath, Detail: "no path"}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	exists, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		if err := create(ctx, path, o); err != nil {
			return nil, err
		}
	}
	// Opened without switching the file to WAL: until veto's schema is
	// seen in it, it may be another program's database, left as it was.
	db, err := openDB(dsn(path, o, false))
	if err != nil {
		return nil, err
	}
	// Connections are kept, not closed as each is released past
	// database/sql's default of two idle: a connection opened again parses
	// its DSN's pragmas and veto's whole schema, and prepares its
	// statements again (a fifth of a service's CPU at concurrency 16,
	// measured, before; TestConcurrentDecisionsKeepTheirConnections). And
	// they are bounded: with 64 requests at once each on a connection of
	// its own, the WAL's few read marks were contended past SQLite's
	// retries, and 1 to 3 calls in a round of 3300–6500 were refused with
	// the state unreachable, in 3 of the 9 rounds measured (servebench at
	// concurrency 64; none in 7 rounds with the bound).
	db.SetMaxIdleConns(maxConns)
	db.SetMaxOpenConns(maxConns)
	// veto's schema marker: a SQLite file without it is another program's
	// database, or one whose first pages were lost.
	var marked int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'veto_meta'`).Scan(&marked); err != nil {
		db.Close()
		return nil, err
	}
	if marked == 0 {
		db.Close()
		return nil, &veto.StateError{Cause: veto.CauseDamaged, Detail: "a SQLite file without veto's schema"}
	}
	// veto's state is in WAL mode from its creation, and the mode stays
	// in the file; a state found otherwise is switched back.
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil {
		db.Close()
		return nil, err
	}
	s, err := sqlstore.New(ctx, db, dialect)
	if err != nil {
		return nil, err
	}
	if o.Verify {
		if err := quickCheck(ctx, s.DB()); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := private(path); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// private makes path's mode 0600 when it is not. A chmod moves the file's
// change time even when the mode stays, and a held file (File) counts that
// as the file moving: every process that opened the state would cost the
// hook server a full verification at its next answer.
func private(path string) error {
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().Perm() == 0o600 {
		return nil
	}
	return os.Chmod(path, 0o600)
}

// maxConns is the most connections a store opens, and keeps open while
// unused. No path of the store holds one while it waits for another
// (statements are prepared outside transactions, sqlstore/stmt.go; the
// conformance suite passes on one connection,
// TestConformanceOnOneConnection), so the bound makes requests wait
// their turn, never each other.
var maxConns = 16 // a test sets it (SetMaxConns)

// openDB is the driver's DB at dsn: sql.Open, which a test of this
// package replaces to fail the calls it chooses (internal/faultdb).
var openDB = func(dsn string) (*sql.DB, error) { return sql.Open("sqlite", dsn) }

// refusal makes err a *veto.StateError for path.
func refusal(path string, err error) error {
	se := sqlstore.CauseOf(err, classify)
	if se.Path == "" {
		c := *se
		c.Path = path
		// SQLite reports a write that found no room as an I/O error,
		// without the system's error: the disk says whether it is full.
		if c.Cause == veto.CauseUnreachable && lowSpace(path) {
			c.Cause, c.Detail = veto.CauseFull, ""
		}
		se = &c
	}
	return se
}

// lowSpace reports whether the disk of path has less than minFree left.
func lowSpace(path string) bool {
	var st syscall.Statfs_t
	return path != "" && syscall.Statfs(filepath.Dir(path), &st) == nil && st.Bavail*uint64(st.Bsize) < minFree
}

// classify names the cause of a driver's or the system's error.
func classify(err error) (veto.Cause, string) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return veto.CauseLocked, ""
		case sqlite3.SQLITE_FULL:
			return veto.CauseFull, ""
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return veto.CauseDamaged, "SQLite finds it malformed"
		case sqlite3.SQLITE_CANTOPEN:
			return veto.CauseUnreachable, "SQLite cannot open it"
		case sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH:
			return veto.CauseUnreachable, "it may not be written"
		case sqlite3.SQLITE_IOERR:
			return veto.CauseUnreachable, "an I/O error"
		}
	}
	return sqlstore.OSCause(err)
}

// dsn is the driver's name for path: a SQLite URI, with the characters
// that URIs give a meaning to escaped, so that "?", "#" and "%" in a
// directory name open exactly that file; mode=rw, since a file is only
// ever created by create. wal switches the file to WAL mode as each
// connection opens (create's new file). Every connection cuts the WAL
// back to checkpointAt when it starts it again, so that no process leaves
// it at the largest size it ever reached.
func dsn(path string, o Options, wal bool) string {
	d := fmt.Sprintf("file:%s?mode=rw&_pragma=busy_timeout(%d)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=secure_delete(1)&_pragma=journal_size_limit(%d)&_txlock=immediate",
		escape(path), o.BusyTimeout.Milliseconds(), checkpointAt)
	if wal {
		d += "&_pragma=journal_mode(WAL)"
	}
	if o.ownCheckpoints {
		d += "&_pragma=wal_autocheckpoint(0)"
	}
	return d
}

func escape(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '%' || c == '?' || c == '#' || c <= ' ' || c == 0x7f:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// The SQLite file header (https://www.sqlite.org/fileformat.html).
const (
	headerSize = 100
	magic      = "SQLite format 3\x00"
)

// inspect checks the file at path before SQLite reads it: it must be a
// regular file holding at least one whole page, and start with SQLite's
// header. exists is false when there is no file.
func inspect(path string) (exists bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return true, err
	}
	if !fi.Mode().IsRegular() {
		return true, &veto.StateError{Cause: veto.CauseBadPath, Detail: "not a regular file"}
	}
	if err := marked(path, fi); err != nil {
		return true, err
	}
	return true, checkHeader(f, fi.Size())
}

// checkHeader reads the header of a file of size bytes.
func checkHeader(f io.ReaderAt, size int64) error {
	damaged := func(format string, a ...any) error {
		return &veto.StateError{Cause: veto.CauseDamaged, Detail: fmt.Sprintf(format, a...)}
	}
	if size == 0 {
		return damaged("the file is empty")
	}
	if size < headerSize {
		return damaged("the file is %d bytes, shorter than a database header", size)
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return err
	}
	if string(h[:len(magic)]) != magic {
		return damaged("the file does not start with SQLite's header")
	}
	page := int64(binary.BigEndian.Uint16(h[16:18]))
	if page == 1 {
		page = 65536
	}
	if page < 512 || page&(page-1) != 0 {
		return damaged("the header names a page size of %d", page)
	}
	if size%page != 0 {
		return damaged("the file is %d bytes, not a whole number of %d-byte pages", size, page)
	}
	return nil
}

// create makes a new store at path: built and verified in a file of its
// own beside it, then linked to path, which fails if another process made
// one first (that one is used).
func create(ctx context.Context, path string, o Options) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close()
	defer os.Remove(name)
	if err := os.Chmod(name, 0o600); err != nil {
		return err
	}
	db, err := openDB(dsn(name, o, true))
	if err != nil {
		return err
	}
	s, err := sqlstore.New(ctx, db, dialect)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	err = os.Link(name, path)
	if fi, serr := os.Stat(path); err == nil && serr == nil && marked(path, fi) != nil {
		os.Remove(markPath(path)) // the mark of an old file whose inode this new one took
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// quickCheck runs SQLite's quick_check: the structure of every page.
func quickCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(1)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var first string
	for rows.Next() {
		if err := rows.Scan(&first); err != nil {
			return err
		}
		break
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if first != "ok" {
		return &veto.StateError{Cause: veto.CauseDamaged, Detail: "SQLite's quick_check fails"}
	}
	return nil
}
