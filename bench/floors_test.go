package main

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestFloors runs the floors go run ./bench measures veto-hook against,
// as it runs them: each answers a hook event, the server floor with and
// without its commit and with veto's record, and the commits and the
// records are in their files. A floor that
// stopped doing its work would make every ratio against it a lie.
func TestFloors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the floor programs")
	}
	dir, err := os.MkdirTemp("", "vf") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "bin")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin+"/", "./floor", "./floorask", "./floorserve", "./floorcommit")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	event := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/dev/null"}}`
	run := func(argv ...string) (string, error) {
		c := exec.Command(filepath.Join(bin, argv[0]), argv[1:]...)
		c.Stdin = strings.NewReader(event)
		out, err := c.Output()
		return string(out), err
	}
	rows := func(state string) int {
		db, err := sql.Open("sqlite", "file:"+state+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM floor WHERE length(body) = 600`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	if _, err := run("floor"); err != nil {
		t.Fatalf("floor: %v", err)
	}
	own := filepath.Join(dir, "own.db")
	for range 2 {
		if _, err := run("floorcommit", own); err != nil {
			t.Fatalf("floorcommit: %v", err)
		}
	}
	if n := rows(own); n != 2 {
		t.Fatalf("floorcommit committed %d rows in two runs", n)
	}

	for _, mode := range []string{"plain", "db", "record"} {
		sock := filepath.Join(dir, mode+".sock")
		args := []string{sock}
		state := filepath.Join(dir, mode+".db")
		switch mode {
		case "db":
			args = []string{sock, state}
		case "record":
			args = []string{sock, state, "record"}
		}
		srv := exec.Command(filepath.Join(bin, "floorserve"), args...)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("floorserve %v did not listen", args)
			}
		}
		for range 3 {
			out, err := run("floorask", sock)
			if err != nil || out != "{}" {
				t.Fatalf("floorask %s: %q, %v", sock, out, err)
			}
		}
		switch mode {
		case "db":
			if n := rows(state); n != 3 {
				t.Fatalf("floorserve committed %d rows for three answers", n)
			}
		case "record":
			// veto's record: the run's start and three allowed decisions,
			// each with its observation.
			db, err := sql.Open("sqlite", "file:"+state+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			var allowed, started, observed int
			err = db.QueryRow(`SELECT (SELECT COUNT(*) FROM veto_events WHERE run = 'floor-s' AND kind = 'invocation_allowed'),
				(SELECT COUNT(*) FROM veto_events WHERE run = 'floor-s' AND kind = 'run_started'),
				(SELECT COUNT(*) FROM veto_observations WHERE run = 'floor-s')`).Scan(&allowed, &started, &observed)
			db.Close()
			if err != nil || allowed != 3 || started != 1 || observed != 3 {
				t.Fatalf("floorserve recorded %d allowed, %d started, %d observed (%v); want 3, 1, 3", allowed, started, observed, err)
			}
		}
	}
	// No server: floorask fails rather than pass for a floor.
	if out, err := run("floorask", filepath.Join(dir, "none.sock")); err == nil {
		t.Fatalf("floorask with no server: %q and no error", out)
	}
}
