package sqlstore

import (
	"context"
	"database/sql"
)

// An append reads, under the write lock, the row of each run it builds
// on, and every request is proved on a file whose schema marker is read
// first: a few statements on each, most of them for a case that almost
// never is, another process having written the file since this one's
// last append. Where the dialect can tell (Dialect.DataVersion), the
// appends' kept connection asks first, within its write transaction,
// whether any other connection has committed since its last one; when
// none has, nothing but this store's own appends wrote, which leave their
// rows in s.heads before their turn is given back: the rows are the ones
// kept, and the marker is the one read before. When another has, or the
// connection cannot tell (a new one, or its last transaction did not
// commit), the marker is read within the transaction, a newer schema
// refused (veto.CauseNewer), and each row read, as before. A request that
// only decides and records (internal/loaded.Appending) is then proved
// without the marker (sqlite.File): its appends prove it, within the
// transaction that would write.

// dataAt is what the appends' kept connection knew of the database when
// its last write transaction committed.
type dataAt struct {
	v  int64 // its data version then
	ok bool  // v was read in a transaction that committed, the marker proved
}

// unmoved reports whether no connection but this one has committed since
// the last transaction at recorded (unmoved, above); when it cannot say
// so it proves the schema marker within tx. at is left for the commit to
// confirm (at.ok).
func (s *Store) unmoved(ctx context.Context, tx *sql.Tx, at *dataAt) (bool, error) {
	if s.d.DataVersion == "" || at == nil {
		return false, nil
	}
	var v int64
	if err := s.queryRow(ctx, tx, s.d.DataVersion).Scan(&v); err != nil {
		return false, unavailable(err)
	}
	same := at.ok && at.v == v
	at.v, at.ok = v, false
	if same {
		return true, nil
	}
	return false, s.proveSchema(ctx, tx)
}

// proveSchema reads the schema marker within tx, a write transaction, and
// refuses a newer schema (veto.CauseNewer). It is not prepared: an
// append reads it only when another process wrote, rarely on a busy
// store.
func (s *Store) proveSchema(ctx context.Context, tx *sql.Tx) error {
	var done int
	err := tx.QueryRowContext(watched(ctx), markerQuery).Scan(&done)
	_, err = s.migrations(done, err)
	return err
}

// ownRow returns the row this store's last append to run left, when it
// keeps one: with unmoved, the row a read would find.
func (s *Store) ownRow(run string) (header, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.heads[run]
	return h, ok
}
