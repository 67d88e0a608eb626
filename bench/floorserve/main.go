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
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"

	"github.com/vetohq/veto/bench/internal/floordb"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: floorserve SOCKET [STATE]")
		os.Exit(64)
	}
	var db *sql.DB
	if len(os.Args) == 3 {
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
			if _, err := io.Copy(io.Discard, c); err != nil {
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
