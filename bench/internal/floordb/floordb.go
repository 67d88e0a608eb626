// Package floordb is the SQLite row the benches' floors commit: one row of
// a decision event's stored bytes (600), keyed (run, seq) as veto's
// events are, in a file opened through veto's driver with veto's settings
// (WAL, synchronous=NORMAL, secure_delete, BEGIN IMMEDIATE, 16
// connections kept). What a floor records, and how, is in one place.
package floordb

import (
	"context"
	"database/sql"

	_ "modernc.org/sqlite"
)

// Open opens (making it when missing) the floor's file at path.
func Open(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rwc&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"+
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=secure_delete(1)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS floor (run TEXT NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run, seq))`); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// body is a decision event's stored bytes, about.
var body = make([]byte, 600)

// Commit inserts and commits the row seq.
func Commit(ctx context.Context, db *sql.DB, seq int64) error {
	_, err := db.ExecContext(ctx, `INSERT INTO floor (run, seq, body) VALUES (?, ?, ?)`, "floor", seq, body)
	return err
}
