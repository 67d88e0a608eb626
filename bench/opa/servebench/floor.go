package main

import (
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"

	"github.com/vetohq/veto/bench/internal/floordb"
)

// The floors of a decision service, each in a process of its own as the
// contenders are, answering the same requests over the same HTTP/1.1 and
// Go net/http stack veto serve and OPA use:
//
//	http:     read the request, answer a fixed allow; nothing decided or
//	          recorded (what serving a request costs, and no less);
//	sqlite:   that, and one row of a decision event's stored bytes (600)
//	          inserted and committed in SQLite before the answer, through
//	          veto's driver (modernc.org/sqlite) with veto's settings (WAL,
//	          synchronous=NORMAL, secure_delete, BEGIN IMMEDIATE, 16
//	          connections), keyed (run, seq) as veto's events are;
//	postgres: that, on PostgreSQL through pgx, with veto's 8 connections.
//
// No decision service that records each decision durably in that store
// answers faster than its floor, or makes more decisions a second on the
// same two cores: it serves the request, and records at least this row.

// floorKinds are the floors servebench runs beside the contenders.
var floorKinds = []string{"http", "sqlite", "postgres"}

// floorName is a floor's contender name.
func floorName(kind string) string {
	switch kind {
	case "sqlite":
		return "HTTP + SQLite insert+commit (floor)"
	case "postgres":
		return "HTTP + PostgreSQL insert+commit (floor)"
	case "record-sqlite":
		return "HTTP + veto's record, SQLite (floor)"
	case "record-postgres":
		return "HTTP + veto's record, PostgreSQL (floor)"
	}
	return "HTTP answer (floor)"
}

// startFloor runs this program again as the floor server of kind (a
// record floor's too), and returns its URL.
func startFloor(kind, sqlitePath, dsn string, procs *[]*exec.Cmd) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(self, "-floor-server", kind, "-floor-sqlite", sqlitePath, "-postgres", dsn)
	return start(cmd, procs, "floor: listening on ")
}

// serveFloor is the floor server of kind (-floor-server): it listens on a
// free port of 127.0.0.1 and says where on stderr.
func serveFloor(kind, sqlitePath, dsn string) error {
	var db *sql.DB
	var insert string
	switch kind {
	case "http":
	case "sqlite":
		var err error
		if db, err = floordb.Open(sqlitePath); err != nil {
			return err
		}
	case "postgres":
		var err error
		db, err = sql.Open("pgx", dsn)
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		if _, err := db.Exec(`CREATE TABLE floor (run TEXT NOT NULL, seq BIGINT NOT NULL, body BYTEA NOT NULL, PRIMARY KEY (run, seq))`); err != nil {
			return err
		}
		insert = `INSERT INTO floor (run, seq, body) VALUES ($1, $2, $3)`
	default:
		return fmt.Errorf("-floor-server: %q is not one of %v", kind, floorKinds)
	}
	body := make([]byte, 600)
	var seq atomic.Int64
	answer := []byte(`{"verdict":"allow"}`)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/decide", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var err error
		switch kind {
		case "sqlite":
			err = floordb.Commit(r.Context(), db, seq.Add(1))
		case "postgres":
			_, err = db.ExecContext(r.Context(), insert, "floor", seq.Add(1), body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "floor: listening on http://%s\n", l.Addr())
	return http.Serve(l, mux)
}
