// Command floorserve is the server floorask asks: it reads each event to
// its end and answers "{}", with nothing decided. With a state file it
// first inserts one row of a decision event's stored bytes (600), keyed
// (run, seq) as veto's events are, and commits it, through veto's SQLite
// driver with veto's settings (WAL, synchronous=NORMAL, secure_delete,
// BEGIN IMMEDIATE): the least a server that records each decision durably
// does before it answers.
//
//	floorserve SOCKET [STATE]
package main

import (
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: floorserve SOCKET [STATE]")
		os.Exit(64)
	}
	var db *sql.DB
	if len(os.Args) == 3 {
		var err error
		db, err = sql.Open("sqlite", "file:"+os.Args[2]+"?mode=rwc&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"+
			"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=secure_delete(1)&_txlock=immediate")
		if err == nil {
			db.SetMaxOpenConns(16)
			db.SetMaxIdleConns(16)
			_, err = db.Exec(`CREATE TABLE IF NOT EXISTS floor (run TEXT NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run, seq))`)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "floorserve:", err)
			os.Exit(1)
		}
	}
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorserve:", err)
		os.Exit(1)
	}
	body := make([]byte, 600)
	var seq atomic.Int64
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			if _, err := io.Copy(io.Discard, c); err != nil {
				return
			}
			if db != nil {
				if _, err := db.Exec(`INSERT INTO floor (run, seq, body) VALUES (?, ?, ?)`, "floor", seq.Add(1), body); err != nil {
					return // no answer: floorask fails, and the bench with it
				}
			}
			io.WriteString(c, "{}")
		}()
	}
}
