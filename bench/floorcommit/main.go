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
	"database/sql"
	"encoding/json"
	"os"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) != 2 {
		os.Exit(64)
	}
	var v map[string]any
	if err := json.NewDecoder(os.Stdin).Decode(&v); err != nil {
		os.Exit(1)
	}
	db, err := sql.Open("sqlite", "file:"+os.Args[1]+"?mode=rwc&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"+
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=secure_delete(1)&_txlock=immediate")
	if err != nil {
		os.Exit(1)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS floor (run TEXT NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run, seq))`); err != nil {
		os.Exit(1)
	}
	if _, err := db.Exec(`INSERT INTO floor (run, seq, body) VALUES (?, ?, ?)`, "floor", time.Now().UnixNano(), make([]byte, 600)); err != nil {
		os.Exit(1)
	}
}
