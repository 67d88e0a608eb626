package export

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vetohq/veto/state"
)

// Flags are veto serve's export flags.
type Flags struct {
	jsonl, syslog, rotate, name string
	keep                        int
	all                         bool
	window                      time.Duration
}

// AddFlags registers the export flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.jsonl, "export-jsonl", "", "export decisions as JSON Lines to FILE (rotated by --export-rotate), or - for stdout")
	fs.StringVar(&f.syslog, "export-syslog", "", "export decisions as RFC 5424 syslog to tcp://HOST:PORT (octet counting) or udp://HOST:PORT [?facility=local0]")
	fs.StringVar(&f.rotate, "export-rotate", "64MB", "rotate the JSON Lines file past this size (0: never)")
	fs.IntVar(&f.keep, "export-keep", 5, "keep this many rotated JSON Lines files")
	fs.BoolVar(&f.all, "export-all", false, "export every event, not only decisions")
	fs.StringVar(&f.name, "export-name", "", "this instance's name for its export cursors (default: the host name; give a stable one where the host name changes, as in a container)")
	fs.DurationVar(&f.window, "export-window", 10*time.Second, "read again this far behind the export cursor, for events that commit late (at least the decision deadline and the instances' clock skew)")
	return f
}

// Source is the state exporters read and keep their cursors in.
type Source struct {
	Log     Log
	Acquire func(ctx context.Context) (release func(), err error)
	DB      func() *sql.DB
	Dialect string // "sqlite" or "postgres"
	Logger  *slog.Logger
	// Deadline is the decision deadline: the window must outlast it.
	Deadline time.Duration
}

// Running is the exporters veto serve started.
type Running struct {
	Metrics *Metrics
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Collectors are the exporters' metrics, for the service's registry;
// none when nothing is exported.
func (r *Running) Collectors() []prometheus.Collector {
	if r == nil || r.cancel == nil {
		return nil
	}
	return r.Metrics.Collectors()
}

// Stop ends the exporters, their cursors saved, within a few seconds.
func (r *Running) Stop() {
	if r == nil || r.cancel == nil {
		return
	}
	r.cancel()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// Any reports whether a sink is named.
func (f *Flags) Any() bool { return f.jsonl != "" || f.syslog != "" }

// Check refuses flags that do not make sense, before anything starts.
func (f *Flags) Check(deadline time.Duration) error {
	if _, err := ParseSize(f.rotate); err != nil {
		return fmt.Errorf("--export-rotate: %w", err)
	}
	if f.keep < 0 {
		return fmt.Errorf("--export-keep: want 0 or more")
	}
	if f.syslog != "" {
		if _, _, _, err := ParseSyslog(f.syslog); err != nil {
			return fmt.Errorf("--export-syslog: %w", err)
		}
	}
	if (f.jsonl != "" || f.syslog != "") && f.window < deadline {
		return fmt.Errorf("--export-window %s is shorter than the decision deadline %s: an event committed late would be missed", f.window, deadline)
	}
	return nil
}

// Start starts an exporter for each sink named, in the background; none
// named, it starts nothing.
func (f *Flags) Start(ctx context.Context, src Source) (*Running, error) {
	r := &Running{Metrics: NewMetrics()}
	if f.jsonl == "" && f.syslog == "" {
		return r, nil
	}
	if err := f.Check(src.Deadline); err != nil {
		return nil, err
	}
	type sink struct {
		name string
		s    Sink
	}
	var sinks []sink
	if f.jsonl != "" {
		max, _ := ParseSize(f.rotate)
		name := "jsonl:-"
		if f.jsonl != "-" {
			abs, err := filepath.Abs(f.jsonl)
			if err != nil {
				return nil, fmt.Errorf("--export-jsonl: %w", err)
			}
			name = "jsonl:" + abs
		}
		sinks = append(sinks, sink{name, NewJSONL(f.jsonl, max, f.keep)})
	}
	if f.syslog != "" {
		network, addr, fac, _ := ParseSyslog(f.syslog)
		sinks = append(sinks, sink{"syslog:" + network + "://" + addr, NewSyslog(network, addr, fac)})
	}
	instance := f.name
	if instance == "" {
		instance, _ = os.Hostname()
	}
	cursors := NewCursors(src.DB, state.Markers(src.Dialect))
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, s := range sinks {
		x, err := New(Config{Name: instance + " " + s.name, Log: src.Log, Cursors: cursors, Sink: s.s, Acquire: src.Acquire, All: f.all,
			Window: f.window, Metrics: r.Metrics, Logger: src.Logger})
		if err != nil {
			r.cancel()
			return nil, err
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			x.Run(ctx)
			s.s.Close()
		}()
	}
	return r, nil
}
