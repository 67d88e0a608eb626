package cli

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vetohq/veto/evidence"
	"github.com/vetohq/veto/rules/control"
	"github.com/vetohq/veto/state"
)

// The signed evidence of the decision log (docs/evidence.md): veto log
// keygen, sign, export and verify --pub, and veto serve's signer.

// isEvidence reports whether veto log's arguments are one of the evidence
// subcommands: keygen, sign, export, or verify with --pub (verify without
// it checks the database's chains, as before).
func isEvidence(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "keygen", "sign", "export":
		return true
	case "verify":
		for _, a := range args[1:] {
			if a == "--" {
				return false
			}
			if n := strings.TrimLeft(a, "-"); len(n) < len(a) && (n == "pub" || strings.HasPrefix(n, "pub=")) {
				return true
			}
		}
	}
	return false
}

func runLogEvidence(ctx context.Context, e *env, args []string) int {
	sub, args := args[0], args[1:]
	fs := newFlags(e, "log "+sub, "[flags]", logDescription)
	file := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	dsn := fs.String("postgres", "", "a PostgreSQL database instead: postgres://user@host:port/db")
	out := fs.String("out", "", "keygen: the private key's file (the public key goes to FILE.pub); export: the file to write (default: stdout)")
	keyFile := fs.String("key", "", "sign: the private key (from veto log keygen)")
	var pubFiles []string
	fs.Func("pub", "verify: a public key (FILE.pub from veto log keygen); repeat it for the keys of a rotation", func(v string) error {
		pubFiles = append(pubFiles, v)
		return nil
	})
	run := fs.String("run", "", "export: only this run")
	since := fs.String("since", "", "export: only events since a time (RFC 3339) or a duration ago (90m, 2h, 7d)")
	covered := fs.Bool("require-covered", false, "verify: fail when any event comes after its run's last checkpoint")
	pos, code, done := parseInterspersed(e, fs, args)
	if done {
		return code
	}
	name := "veto log " + sub
	if (sub == "verify") != (len(pos) == 1) || len(pos) > 1 {
		fmt.Fprintf(e.stderr, "%s: verify takes one export file; keygen, sign and export take none\n", name)
		return ExitUsage
	}
	switch sub {
	case "keygen":
		if *out == "" {
			fmt.Fprintln(e.stderr, "veto log keygen: --out FILE is required")
			return ExitUsage
		}
		id, err := evidence.GenerateKey(*out)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log keygen:", err)
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "key %s: private key in %s (mode 0600), public key in %s.pub\n", id, *out, *out)
		return ExitAllow
	case "verify":
		return logVerifyExport(e, pubFiles, pos[0], *covered)
	}
	var o evidence.ExportOptions
	if sub == "export" {
		o.Run = *run
		if *since != "" {
			t, err := parseSince(*since)
			if err != nil {
				fmt.Fprintln(e.stderr, "veto log export: --since:", err)
				return ExitUsage
			}
			o.Since = t
		}
	}
	if sub == "sign" && *keyFile == "" {
		fmt.Fprintln(e.stderr, "veto log sign: --key FILE is required")
		return ExitUsage
	}
	sv, err := state.OpenService(ctx, state.Name{Path: *file, DSN: *dsn}, state.ServiceOptions{})
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: cannot open the decision log: %s\n", name, stateCause(err))
		return ExitDeny
	}
	defer sv.Close()
	table := state.Checkpoints(sv.DBFunc(), sv.Dialect())
	if sub == "sign" {
		key, err := evidence.LoadPrivate(*keyFile)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log sign:", err)
			return ExitDeny
		}
		s, err := evidence.NewSigner(evidence.Options{Key: key, Table: table, Acquire: sv.Acquire, Interval: time.Second})
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log sign:", err)
			return ExitDeny
		}
		n, err := s.SignAll(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log sign:", err)
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "signed %d checkpoint(s) with key %s\n", n, s.KeyID())
		return ExitAllow
	}
	release, err := sv.Acquire(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: cannot open the decision log: %s\n", name, stateCause(err))
		return ExitDeny
	}
	defer release()
	var w io.Writer = e.stdout
	var f *os.File
	if *out != "" {
		if f, err = os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			fmt.Fprintln(e.stderr, "veto log export:", err)
			return ExitDeny
		}
		w = f
	}
	got, err := evidence.Export(ctx, w, sv.Log, table, o)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "veto log export:", err)
		return ExitDeny
	}
	fmt.Fprintf(e.stderr, "exported %d run(s), %d event(s), %d checkpoint(s)\n", got.Runs, got.Events, got.Checkpoints)
	return ExitAllow
}

// logVerifyExport checks an export offline with the public key: it needs
// no database.
func logVerifyExport(e *env, pubFiles []string, path string, requireCovered bool) int {
	var pubs []ed25519.PublicKey
	for _, name := range pubFiles {
		pub, err := evidence.LoadPublic(name)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log verify:", err)
			return ExitDeny
		}
		pubs = append(pubs, pub)
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto log verify:", err)
		return ExitDeny
	}
	defer f.Close()
	p, err := evidence.Parse(f)
	if err != nil {
		fmt.Fprintf(e.stdout, "%s: not a valid export: %v\n", path, err)
		return ExitDeny
	}
	r := evidence.Verify(p, pubs...)
	for _, n := range r.Notes {
		fmt.Fprintln(e.stdout, "note:", n)
	}
	if r.Before > 0 {
		fmt.Fprintf(e.stdout, "note: %d signed head(s) lie before where the export starts and were not compared\n", r.Before)
	}
	for _, msg := range r.Failures {
		fmt.Fprintln(e.stdout, "FAIL:", msg)
	}
	if !r.OK() {
		fmt.Fprintf(e.stdout, "%d failure(s) in %d run(s), %d event(s), %d checkpoint(s)\n", len(r.Failures), r.Runs, r.Events, r.Checkpoints)
		return ExitDeny
	}
	fmt.Fprintf(e.stdout, "ok: %d run(s), %d event(s), %d checkpoint(s): every chain holds and every signature verifies\n", r.Runs, r.Events, r.Checkpoints)
	if r.Uncovered > 0 {
		fmt.Fprintf(e.stdout, "not yet covered: %d event(s) after their run's last checkpoint (their chain holds; no signature vouches for them yet)\n", r.Uncovered)
		if requireCovered {
			fmt.Fprintln(e.stdout, "FAIL: --require-covered: events after the last checkpoint")
			return ExitDeny
		}
	}
	return ExitAllow
}

// startSigner starts veto serve's signer on the service's state, when a
// key is given; stop ends it after a last checkpoint. Nothing on the
// decision path waits for it.
func startSigner(st *serviceState, keyFile string, every int, interval time.Duration, log *slog.Logger) (stop func(), metrics []prometheus.Collector, err error) {
	if keyFile == "" {
		return func() {}, nil, nil
	}
	key, err := evidence.LoadPrivate(keyFile)
	if err != nil {
		return nil, nil, err
	}
	s, err := evidence.NewSigner(evidence.Options{Key: key, Table: state.Checkpoints(st.db, st.dialect),
		Acquire: st.acquire, Every: every, Interval: interval, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	metrics = []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "veto_checkpoints_signed_total",
			Help: "Checkpoints of the decision log this instance signed and stored (--sign-key)."}, func() float64 { return float64(s.Signed.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "veto_checkpoint_failures_total",
			Help: "Looks for a due checkpoint, or signings, that failed (the state refused them)."}, func() float64 { return float64(s.Failed.Load()) }),
	}
	// While it signs, the key is veto's: the agent neither reads nor
	// writes it (veto.control).
	abs, _ := filepath.Abs(keyFile)
	unhold := control.Holding("serve", abs)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	return func() { cancel(); wg.Wait(); unhold() }, metrics, nil
}
