// Command floorcommit is the floor of a hook that records its decision
// itself, with no server: floor's work (read the hook's JSON from stdin,
// decode it), then one row of a decision event's stored bytes (600)
// inserted and committed in a SQLite file, through veto's driver with
// veto's settings (WAL, synchronous=NORMAL, secure_delete, BEGIN
// IMMEDIATE), exit 0. A hook that records each decision durably in
// SQLite before it answers, without a server, cannot cost less.
//
//	floorcommit STATE
package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/vetohq/veto/bench/internal/floordb"
)

func main() {
	if len(os.Args) != 2 {
		os.Exit(64)
	}
	var v map[string]any
	if err := json.NewDecoder(os.Stdin).Decode(&v); err != nil {
		os.Exit(1)
	}
	db, err := floordb.Open(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	defer db.Close()
	if err := floordb.Commit(context.Background(), db, time.Now().UnixNano()); err != nil {
		os.Exit(1)
	}
}
