// Command servebench measures veto serve against OPA's REST server, side
// by side in one run: decisions per second and p50/p99 latency at
// concurrency 1, 16 and 64, for
//
//	veto serve on SQLite (one instance),
//	veto serve on PostgreSQL (one instance, and two sharing the database,
//	  the workers alternating between them),
//	opa run --server, built from its Go module (this module's pinned
//	  version), deciding the same calls with the Rego file rules of this
//	  module (policy.rego) over HTTP.
//
// Every contender decides the same allowed Read of an existing file in a
// real workspace, over HTTP/1.1 with keep-alive, one run per worker. veto
// resolves the path on the filesystem, runs every rule of its default
// policy and records each decision durably (a token checked per request);
// OPA gets the path already resolved and records nothing.
//
// Beside them run the floors no such service goes under (floor.go): the
// bare PostgreSQL insert+commit, in this process; and, each a server of
// its own over the same HTTP, an answer with nothing decided, and an
// answer after one row inserted and committed in SQLite or PostgreSQL.
// And the floors of veto's own record (record.go): veto's gate with no
// rule on veto serve's state, recording each call as veto serve does.
//
//	cd bench/opa && go run ./servebench [-seconds 3] [-postgres DSN] [-before DIR]
//
// With -export it measures what exporting costs a decision instead: veto
// serve on SQLite and on PostgreSQL, each with no export and with every
// decision exported to a JSON Lines file and to a syslog server over TCP
// (a listener of the bench's own that reads and drops), alternating at
// each concurrency; OPA is not run.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	opabench "github.com/vetohq/veto/bench/opa"
	"github.com/vetohq/veto/tools"
)

func main() {
	seconds := flag.Float64("seconds", 3, "how long each contender runs at each concurrency")
	pg := flag.String("postgres", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "the PostgreSQL server (a schema of the bench's own is made and dropped)")
	levels := flag.String("concurrency", "1,16,64", "the concurrency levels")
	exportMode := flag.Bool("export", false, "measure veto serve with export off and on, and not OPA")
	fleetMode := flag.Bool("fleet", false, "measure veto serve with each fleet feature on (export, signing, a shadow revision, all three) against off, and not OPA")
	rounds := flag.Int("rounds", 1, "run every contender at every concurrency this many times, alternating")
	flag.StringVar(&before, "before", "", "a directory with another build's veto: its veto serve on SQLite and on PostgreSQL run as contenders too, each beside this build's")
	flag.StringVar(&only, "only", "", "run only the contenders whose name holds this (or one of these, separated by |; =NAME: that name only)")
	floorServer := flag.String("floor-server", "", "serve as the floor of this kind (http, sqlite, postgres): servebench runs itself so")
	floorSQLite := flag.String("floor-sqlite", "", "the SQLite file of the sqlite floor server")
	flag.Parse()
	if *floorServer != "" {
		serveIt := serveFloor
		if isRecord(*floorServer) {
			serveIt = serveRecord
		}
		if err := serveIt(*floorServer, *floorSQLite, *pg); err != nil {
			fmt.Fprintln(os.Stderr, "servebench floor:", err)
			os.Exit(1)
		}
		return
	}
	if *fleetMode {
		*exportMode = true // the same instances to start from; fleet adds its own
	}
	fleet = *fleetMode
	if err := run(time.Duration(*seconds*float64(time.Second)), *pg, *levels, *exportMode, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "servebench:", err)
		os.Exit(1)
	}
}

type contender struct {
	name  string
	urls  []string // the workers alternate between them
	token string
	req   func(url string, worker, i int) *http.Request
	// direct, when set, is the contender's call instead of a request:
	// the commit floor, which is no service.
	direct func(worker, i int) error
}

type result struct {
	name        string
	conc, round int
	n, failed   int
	elapsed     time.Duration
	p50, p99    time.Duration
	lat         []time.Duration
	description string
	cpu         time.Duration // the service's processes' CPU per decision (not the database's); 0: not known
	dbCPU       time.Duration // PostgreSQL's processes' CPU per decision, for the contenders that use it
}

// fleet: -fleet's contenders instead of -export's.
var fleet bool

// before: a directory holding another build's veto (-before), measured
// beside this one.
var before string

// only: run only the contenders whose name holds it, or one of its
// |-separated parts; a part "=NAME" is that name only (-only).
var only string

// pidOf is the process that answers at each URL.
var pidOf = map[string]int{}

// postgresPIDs are the machine's PostgreSQL server processes.
func postgresPIDs() []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/comm"); err == nil && strings.TrimSpace(string(b)) == "postgres" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cpuOf is the CPU time (user and system) the processes have used, read
// from /proc; ok is false when a process's cannot be read (a process
// that is gone counts nothing). A process started a moment ago may have
// used none yet: 0 is a reading.
func cpuOf(pids []int) (t time.Duration, ok bool) {
	for _, pid := range pids {
		if pid <= 0 {
			return 0, false
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 > len(b) {
			return 0, false
		}
		f := strings.Fields(string(b[i+2:]))
		if len(f) < 13 {
			return 0, false
		}
		var u, s int64
		fmt.Sscan(f[11], &u)
		fmt.Sscan(f[12], &s)
		t += time.Duration(u+s) * time.Second / 100 // USER_HZ
	}
	return t, true
}

func run(each time.Duration, pgBase, levelList string, exportMode bool, rounds int) error {
	var levels []int
	for _, s := range strings.Split(levelList, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			return fmt.Errorf("-concurrency: %q", s)
		}
		levels = append(levels, n)
	}
	tmp, err := os.MkdirTemp("", "veto-servebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}()

	bin := filepath.Join(tmp, "bin")
	// veto is built in its own module (the checkout two levels up), OPA
	// in this one, which pins it.
	builds := []struct{ out, pkg, dir string }{{"veto", "./cmd/veto", "../.."}, {"opa", "github.com/open-policy-agent/opa", "."}}
	if exportMode {
		builds = builds[:1]
	}
	for _, b := range builds {
		fmt.Fprintf(os.Stderr, "building %s\n", b.pkg)
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bin, b.out), b.pkg)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", b.pkg, err)
		}
	}

	// The world: a home and a workspace of real files.
	home := filepath.Join(tmp, "home")
	ws := filepath.Join(home, "ws")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(ws, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	target := filepath.Join(ws, "src", "main.go")
	if err := os.WriteFile(target, []byte("package main\n"), 0o644); err != nil {
		return err
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".state"), "VETO_MANAGED_POLICY=" + filepath.Join(home, "none.yaml")}

	// A PostgreSQL schema of the bench's own.
	var sfx [4]byte
	rand.Read(sfx[:])
	schema := "veto_servebench_" + hex.EncodeToString(sfx[:])
	db, err := sql.Open("pgx", pgBase)
	if err != nil {
		return err
	}
	defer db.Close()
	// ownSchema makes a schema named so, dropped when run returns, and
	// returns the DSN that uses it.
	var made []string
	defer func() {
		for _, sc := range made {
			db.Exec("DROP SCHEMA " + sc + " CASCADE")
		}
	}()
	ownSchema := func(name string) (string, error) {
		if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
			return "", err
		}
		made = append(made, name)
		return pgBase + "&search_path=" + name, nil
	}
	dsn, err := ownSchema(schema)
	if err != nil {
		return fmt.Errorf("PostgreSQL at %s: %w", pgBase, err)
	}
	state := filepath.Join(tmp, "veto.db")

	// tokenBy and serveBy run a veto's token create and veto serve; token
	// and serve, this build's.
	tokenBy := func(veto string, args ...string) (string, error) {
		cmd := exec.Command(veto, append([]string{"token", "create", "--actor", "agent:bench"}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	serveBy := func(veto string, args ...string) (string, error) {
		cmd := exec.Command(veto, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "off", "--workspace-root", ws}, args...)...)
		cmd.Env = env
		return start(cmd, &procs, "veto serve: listening on ")
	}
	token := func(args ...string) (string, error) { return tokenBy(filepath.Join(bin, "veto"), args...) }
	serve := func(args ...string) (string, error) { return serveBy(filepath.Join(bin, "veto"), args...) }
	sqliteTok, err := token("--state", state)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	pgTok, err := token("--postgres", dsn)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	sqliteURL, err := serve("--state", state)
	if err != nil {
		return err
	}
	pgURL1, err := serve("--postgres", dsn)
	if err != nil {
		return err
	}
	pgURL2, err := serve("--postgres", dsn)
	if err != nil {
		return err
	}

	vetoReq := func(tok, tag string) func(url string, worker, i int) *http.Request {
		return func(url string, worker, i int) *http.Request {
			body := fmt.Sprintf(`{"call_id":"%s-c%d-%d","tool":"Read","args":{"file_path":%q},"cwd":%q,"run":{"ref":"bench-%s-%d","fresh":true}}`,
				tag, worker, i, target, ws, tag, worker)
			r, _ := http.NewRequest("POST", url+"/v1/decide", strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+tok)
			return r
		}
	}
	var contenders []contender
	if exportMode {
		// A syslog server that reads and drops; a state of their own for
		// the exporting instances, so that each exports its own decisions.
		drain, err := netListen()
		if err != nil {
			return err
		}
		defer drain.Close()
		go func() {
			for {
				c, err := drain.Accept()
				if err != nil {
					return
				}
				go io.Copy(io.Discard, c)
			}
		}()
		exportArgs := func(name string) []string {
			return []string{"--export-jsonl", filepath.Join(tmp, name+".jsonl"), "--export-syslog", "tcp://" + drain.Addr().String()}
		}
		state2 := filepath.Join(tmp, "veto-export.db")
		sqliteTok2, err := token("--state", state2)
		if err != nil {
			return fmt.Errorf("token: %w", err)
		}
		sqliteExportURL, err := serve(append([]string{"--state", state2}, exportArgs("sqlite")...)...)
		if err != nil {
			return err
		}
		dsn2, err := ownSchema(schema + "_export")
		if err != nil {
			return err
		}
		pgTok2, err := token("--postgres", dsn2)
		if err != nil {
			return fmt.Errorf("token: %w", err)
		}
		pgExportURL, err := serve(append([]string{"--postgres", dsn2}, exportArgs("postgres")...)...)
		if err != nil {
			return err
		}
		if fleet {
			// Each feature on an instance and a state of its own: signing
			// (a checkpoint every 1000 events or 10 s, the defaults), a
			// shadow revision (every call decided again, off the decision
			// path; it agrees, so nothing is stored), and all three.
			vetoCmd := func(args ...string) error {
				cmd := exec.Command(filepath.Join(bin, "veto"), args...)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				if err != nil {
					return fmt.Errorf("veto %s: %v\n%s", args[0], err, out)
				}
				return nil
			}
			key := filepath.Join(tmp, "sign.pem")
			if err := vetoCmd("log", "keygen", "--out", key); err != nil {
				return err
			}
			shadowFile := filepath.Join(tmp, "shadow.yaml")
			if err := os.WriteFile(shadowFile, []byte("rules:\n  - id: bench.shadow\n    deny: 'tool == \"Bash\" && args.command.startsWith(\"rm \")'\n    reason: bench_shadow\n"), 0o644); err != nil {
				return err
			}
			features := []struct {
				name string
				args func(name string) []string
				prep func(store ...string) error
			}{
				{"signing", func(string) []string { return []string{"--sign-key", key} }, nil},
				{"shadow", func(string) []string { return nil }, func(store ...string) error {
					return vetoCmd(append([]string{"policy", "push", "--shadow", shadowFile}, store...)...)
				}},
				{"export, signing, shadow", func(name string) []string { return append(exportArgs(name), "--sign-key", key) }, func(store ...string) error {
					return vetoCmd(append([]string{"policy", "push", "--shadow", shadowFile}, store...)...)
				}},
			}
			contenders = []contender{
				{name: "veto serve, SQLite", urls: []string{sqliteURL}, req: vetoReq(sqliteTok, "sqlite")},
				{name: "veto serve, SQLite, export", urls: []string{sqliteExportURL}, req: vetoReq(sqliteTok2, "sqlite-x")},
				{name: "veto serve, PostgreSQL", urls: []string{pgURL1}, req: vetoReq(pgTok, "pg")},
				{name: "veto serve, PostgreSQL, export", urls: []string{pgExportURL}, req: vetoReq(pgTok2, "pg-x")},
			}
			for i, f := range features {
				st := filepath.Join(tmp, fmt.Sprintf("veto-fleet-%d.db", i))
				if f.prep != nil {
					if err := f.prep("--state", st); err != nil {
						return err
					}
				}
				tk, err := token("--state", st)
				if err != nil {
					return fmt.Errorf("token: %w", err)
				}
				u, err := serve(append([]string{"--state", st}, f.args(fmt.Sprintf("sqlite-f%d", i))...)...)
				if err != nil {
					return err
				}
				contenders = append(contenders, contender{name: "veto serve, SQLite, " + f.name, urls: []string{u}, req: vetoReq(tk, fmt.Sprintf("sqlite-f%d", i))})
				d, err := ownSchema(fmt.Sprintf("%s_f%d", schema, i))
				if err != nil {
					return err
				}
				if f.prep != nil {
					if err := f.prep("--postgres", d); err != nil {
						return err
					}
				}
				tk, err = token("--postgres", d)
				if err != nil {
					return fmt.Errorf("token: %w", err)
				}
				u, err = serve(append([]string{"--postgres", d}, f.args(fmt.Sprintf("postgres-f%d", i))...)...)
				if err != nil {
					return err
				}
				contenders = append(contenders, contender{name: "veto serve, PostgreSQL, " + f.name, urls: []string{u}, req: vetoReq(tk, fmt.Sprintf("pg-f%d", i))})
			}
			return measure(contenders, levels, each, rounds)
		}
		contenders = []contender{
			{name: "veto serve, SQLite", urls: []string{sqliteURL}, req: vetoReq(sqliteTok, "sqlite")},
			{name: "veto serve, SQLite, export", urls: []string{sqliteExportURL}, req: vetoReq(sqliteTok2, "sqlite-x")},
			{name: "veto serve, PostgreSQL", urls: []string{pgURL1}, req: vetoReq(pgTok, "pg")},
			{name: "veto serve, PostgreSQL, export", urls: []string{pgExportURL}, req: vetoReq(pgTok2, "pg-x")},
		}
		return measure(contenders, levels, each, rounds)
	}

	// OPA's server with the Rego file rules and their data.
	pol, err := opabench.New(context.Background(), opabench.Config{Home: home, Roots: []string{os.TempDir()}, Tools: tools.Defaults()})
	if err != nil {
		return err
	}
	data, err := opabench.Data(opabench.Config{Home: home, Roots: []string{os.TempDir()}, Tools: tools.Defaults()})
	if err != nil {
		return err
	}
	dataFile := filepath.Join(tmp, "data.json")
	b, _ := json.Marshal(map[string]any{"veto": map[string]any{"files": data}})
	if err := os.WriteFile(dataFile, b, 0o644); err != nil {
		return err
	}
	policyFile, err := filepath.Abs("policy.rego")
	if err != nil {
		return err
	}
	opaCmd := exec.Command(filepath.Join(bin, "opa"), "run", "--server", "--addr", "127.0.0.1:0", "--log-level", "error",
		"--disable-telemetry", policyFile, dataFile)
	opaCmd.Env = env
	opaURL, err := startOPA(opaCmd, &procs)
	if err != nil {
		return err
	}
	input, err := pol.Input("Read", map[string]any{"file_path": target}, ws, opabench.Env{Cwd: ws, Home: home})
	if err != nil {
		return err
	}
	opaBody, _ := json.Marshal(map[string]any{"input": input})

	// Each contender's calls and runs are its own (tag): a call id another
	// contender's decision observed already would be decided again, which
	// a pipelined append cannot record (it reads first), and a run another
	// contender left would start with that contender's history.
	contenders = []contender{
		{name: "veto serve, SQLite", urls: []string{sqliteURL}, req: vetoReq(sqliteTok, "sqlite")},
		{name: "veto serve, PostgreSQL", urls: []string{pgURL1}, req: vetoReq(pgTok, "pg")},
	}
	if before != "" {
		// Another build's veto, on a state and a schema of its own,
		// beside this build's in every round.
		old, err := filepath.Abs(filepath.Join(before, "veto"))
		if err != nil {
			return err
		}
		oldDSN, err := ownSchema(schema + "_before")
		if err != nil {
			return err
		}
		oldState := filepath.Join(tmp, "veto-before.db")
		for _, st := range []struct{ name, flag, at, tag string }{
			{"veto serve, SQLite (before)", "--state", oldState, "sqlite-b"},
			{"veto serve, PostgreSQL (before)", "--postgres", oldDSN, "pg-b"},
		} {
			tk, err := tokenBy(old, st.flag, st.at)
			if err != nil {
				return fmt.Errorf("the build before: token: %w", err)
			}
			u, err := serveBy(old, st.flag, st.at)
			if err != nil {
				return fmt.Errorf("the build before: %w", err)
			}
			contenders = append(contenders, contender{name: st.name, urls: []string{u}, req: vetoReq(tk, st.tag)})
		}
	}
	contenders = append(contenders, []contender{
		{name: "veto serve, PostgreSQL ×2", urls: []string{pgURL1, pgURL2}, req: vetoReq(pgTok, "pg2")},
		{name: "opa run --server", urls: []string{opaURL}, req: func(url string, _, _ int) *http.Request {
			r, _ := http.NewRequest("POST", url+"/v1/data/veto/policy/files/decision", bytes.NewReader(opaBody))
			return r
		}},
	}...)
	floor, err := commitFloor(db, schema)
	if err != nil {
		return err
	}
	contenders = append(contenders, floor)
	for _, kind := range floorKinds {
		u, err := startFloor(kind, filepath.Join(tmp, "floor.db"), dsn, &procs)
		if err != nil {
			return fmt.Errorf("the %s floor: %w", kind, err)
		}
		contenders = append(contenders, contender{name: floorName(kind), urls: []string{u}, req: vetoReq("", "floor-"+kind)})
	}
	recordState := filepath.Join(tmp, "record.db")
	recordDSN, err := ownSchema(schema + "_record")
	if err != nil {
		return err
	}
	for _, kind := range recordKinds {
		u, err := startFloor(kind, recordState, recordDSN, &procs)
		if err != nil {
			return fmt.Errorf("the %s floor: %w", kind, err)
		}
		contenders = append(contenders, contender{name: floorName(kind), urls: []string{u}, req: vetoReq("", kind)})
	}
	if err := measure(contenders, levels, each, rounds); err != nil {
		return err
	}
	return verify(filepath.Join(bin, "veto"), env, []string{"--state", state}, []string{"--postgres", dsn},
		[]string{"--state", recordState}, []string{"--postgres", recordDSN})
}

// commitFloor is the floor a durable decision on PostgreSQL cannot go
// under, measured beside the contenders: one round trip that inserts a
// row of about a decision event's stored bytes and commits it, on the
// same server, through the same driver, with synchronous_commit as the
// server has it.
func commitFloor(db *sql.DB, schema string) (contender, error) {
	table := schema + ".commit_floor"
	if _, err := db.Exec("CREATE TABLE " + table + " (worker BIGINT, i BIGINT, body BYTEA NOT NULL, PRIMARY KEY (worker, i))"); err != nil {
		return contender{}, err
	}
	body := make([]byte, 600)
	insert := "INSERT INTO " + table + " (worker, i, body) VALUES ($1, $2, $3)"
	db.SetMaxOpenConns(128)
	db.SetMaxIdleConns(128)
	return contender{name: "PostgreSQL insert+commit (floor)", direct: func(worker, i int) error {
		_, err := db.Exec(insert, worker, i, body)
		return err
	}}, nil
}

// verify runs veto log verify on each store the contenders recorded in:
// every chain must hold after the run.
func verify(veto string, env []string, stores ...[]string) error {
	for _, st := range stores {
		cmd := exec.Command(veto, append([]string{"log", "verify"}, st...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		fmt.Printf("veto log verify %s: %s", st[0], out)
		if err != nil {
			return fmt.Errorf("veto log verify %s: %w", st[0], err)
		}
	}
	return nil
}

// measure runs each contender at each level, rounds times, alternating,
// and prints the table.
func measure(contenders []contender, levels []int, each time.Duration, rounds int) error {
	if only != "" {
		var kept []contender
		for _, c := range contenders {
			for _, o := range strings.Split(only, "|") {
				if exact, ok := strings.CutPrefix(o, "="); ok && c.name == exact || !ok && strings.Contains(c.name, o) {
					kept = append(kept, c)
					break
				}
			}
		}
		contenders = kept
	}
	// Each contender answers once before the clock starts (and must allow).
	for _, c := range contenders {
		if err := warm(c); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	var results []result
	for round := range max(rounds, 1) {
		for _, conc := range levels {
			for _, c := range contenders {
				fmt.Fprintf(os.Stderr, "%s at concurrency %d (round %d)\n", c.name, conc, round+1)
				r := load(c, conc, each, round)
				r.round = round
				results = append(results, r)
			}
		}
	}
	report(os.Stdout, results)
	return nil
}

// start runs cmd and returns the URL its stderr announces after prefix.
func start(cmd *exec.Cmd, procs *[]*exec.Cmd, prefix string) (string, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	*procs = append(*procs, cmd)
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				got <- a
			}
		}
	}()
	select {
	case u := <-got:
		pidOf[u] = cmd.Process.Pid
		return u, nil
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("%s did not say where it listens", cmd.Path)
	}
}

// startOPA runs OPA's server and finds its address in its log.
func startOPA(cmd *exec.Cmd, procs *[]*exec.Cmd) (string, error) {
	// With --addr :0 OPA logs the address it listens on at info; ask for
	// a fixed free port instead, which is simpler to read.
	l, err := freePort()
	if err != nil {
		return "", err
	}
	for i, a := range cmd.Args {
		if a == "127.0.0.1:0" {
			cmd.Args[i] = l
		}
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	*procs = append(*procs, cmd)
	u := "http://" + l
	pidOf[u] = cmd.Process.Pid
	for range 300 {
		resp, err := http.Get(u + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return u, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("opa did not answer on %s", u)
}

func warm(c contender) error {
	if c.direct != nil {
		return c.direct(999, 0)
	}
	for _, u := range c.urls {
		resp, err := http.DefaultClient.Do(c.req(u, 999, 0))
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !(bytes.Contains(b, []byte(`"verdict":"allow"`)) || bytes.Contains(b, []byte(`"allow":true`))) {
			return fmt.Errorf("the warm-up call was not allowed: %d %s", resp.StatusCode, b)
		}
	}
	return nil
}

// load runs conc workers for d, each sending one request after another.
// Each worker decides in a run of its own, kept from round to round (a
// run grows as a session does), with call ids new in every round: a call
// id seen before in the run would be a retry, which veto records apart
// and answers on a slower path than a new call.
func load(c contender, conc int, d time.Duration, round int) result {
	tr := &http.Transport{MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	var (
		mu     sync.Mutex
		lat    []time.Duration
		failed atomic.Int64
		// firstFailure is what the first call that failed was answered.
		firstFailure atomic.Value
		wg           sync.WaitGroup
	)
	var pids []int
	for _, u := range c.urls {
		pids = append(pids, pidOf[u])
	}
	cpu0, cpuOK := cpuOf(pids)
	usesPG := strings.Contains(c.name, "PostgreSQL")
	var pg []int
	var pg0 time.Duration
	if usesPG {
		pg = postgresPIDs()
		pg0, _ = cpuOf(pg)
	}
	deadline := time.Now().Add(d)
	began := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				if c.direct != nil {
					if err := c.direct(w+conc*1000, round*100_000_000+i); err != nil {
						failed.Add(1)
						continue
					}
					mine = append(mine, time.Since(t0))
					continue
				}
				u := c.urls[(w+i)%len(c.urls)]
				resp, err := hc.Do(c.req(u, w+conc*1000, round*100_000_000+i))
				if err != nil {
					if failed.Add(1) == 1 {
						firstFailure.Store(err.Error())
					}
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					if failed.Add(1) == 1 {
						firstFailure.Store(fmt.Sprintf("%d %.300s", resp.StatusCode, b))
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r := result{name: c.name, conc: conc, n: len(lat), failed: int(failed.Load()), elapsed: time.Since(began), lat: lat}
	if f, ok := firstFailure.Load().(string); ok {
		fmt.Fprintf(os.Stderr, "%s at concurrency %d: %d call(s) failed, the first: %s\n", c.name, conc, r.failed, f)
	}
	if cpu1, ok := cpuOf(pids); len(pids) > 0 && cpuOK && ok && len(lat) > 0 {
		r.cpu = (cpu1 - cpu0) / time.Duration(len(lat))
	}
	if usesPG && len(lat) > 0 {
		// Backends started during the load count whole: they were not
		// there before it.
		seen := map[int]bool{}
		for _, p := range pg {
			seen[p] = true
		}
		all := pg
		for _, p := range postgresPIDs() {
			if !seen[p] {
				all = append(all, p)
			}
		}
		pg1, _ := cpuOf(all)
		r.dbCPU = (pg1 - pg0) / time.Duration(len(lat))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.p50 = lat[len(lat)/2]
		r.p99 = lat[len(lat)*99/100]
	}
	return r
}

func report(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "contender\tconcurrency\tdecisions/s\tp50\tp99\tfailed\tp50 ÷ OPA's\tservice CPU/decision\tPostgreSQL CPU/decision\t")
	type at struct{ conc, round int }
	opa := map[at]time.Duration{} // OPA's p50 in the same round
	for _, r := range rs {
		if strings.HasPrefix(r.name, "opa") {
			opa[at{r.conc, r.round}] = r.p50
		}
	}
	for _, r := range rs {
		ratio := "-"
		if o := opa[at{r.conc, r.round}]; o > 0 && !strings.HasPrefix(r.name, "opa") {
			ratio = fmt.Sprintf("%.2f", float64(r.p50)/float64(o))
		}
		cpu := "-"
		if r.cpu > 0 {
			cpu = r.cpu.Round(time.Microsecond).String()
		}
		db := "-"
		if r.dbCPU > 0 {
			db = r.dbCPU.Round(time.Microsecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.name, r.conc, float64(r.n)/r.elapsed.Seconds(),
			r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.failed, ratio, cpu, db)
	}
	tw.Flush()
}

// freePort finds a free loopback port.
func freePort() (string, error) {
	l, err := netListen()
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
