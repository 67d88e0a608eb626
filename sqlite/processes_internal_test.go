package sqlite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rules/sequence"
)

// heldChildEnv names the state a child of TestTwoProcessesHoldOneFile
// holds; heldChildName, the child's name.
const (
	heldChildEnv  = "VETO_HELD_CHILD_STATE"
	heldChildName = "VETO_HELD_CHILD_NAME"
)

// The shared run's bound on Reads, and what each child asks of it: the
// two children together ask for more than the bound allows.
const (
	sharedReads = 100
	childReads  = 120
	childOwn    = 40
)

// decided is one decision a child reports.
type decided struct {
	Run     string `json:"run"`
	Call    string `json:"call"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
	// Verifications is set on the child's last line instead: how many
	// times its file was opened and verified.
	Verifications int64 `json:"verifications,omitempty"`
	// Ready is set on the child's first line: its file is open and it
	// waits for the word to go.
	Ready bool `json:"ready,omitempty"`
}

// heldGate is a gate on f with the history rule the test holds the two
// processes to: at most sharedReads Reads a run, counted from the run's
// tally.
func heldGate(t testing.TB, f *File) *veto.Gate {
	rules, err := sequence.Rules(sequence.Config{MaxCalls: map[string]int{"Read": sharedReads},
		Tool: func(string) *veto.Descriptor { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Store: f, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestTwoProcessesHoldOneFile: two processes each hold the same state as
// the hook server and veto serve hold theirs (a File that verifies, keeps
// the rows it wrote, and checkpoints its own WAL, here past 128 KiB so
// that the WAL is copied many times while both decide) and decide at once in one run bounded
// by a history rule, and each in a run of its own. The bound holds across
// them: exactly sharedReads Reads of the shared run are allowed, the rest
// refused by the rule (or, having lost every try, as contended, and then
// not recorded); every decision a process answered is recorded once, as
// it answered it, and no other; each run's chain holds; and the shared
// run's tally is the one its events add up to. The test's own process,
// which held the file and decided in the shared run before them, sees
// their checkpoints moved the file, verifies it again, and decides on
// the run as they left it, not on the row it kept.
func TestTwoProcessesHoldOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// This process holds the file too, and decided in the shared run
	// before the children start: the row it kept is stale once they
	// have decided.
	held := OpenFile(path, Options{Verify: true, BusyTimeout: 60 * time.Second})
	defer held.Close()
	parentGate := heldGate(t, held)
	decideHeld := func(id string) veto.Verdict {
		release, err := held.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		return parentGate.Decide(context.Background(), &veto.Call{ID: id, Tool: "Read", Run: veto.Run{Ref: "shared", Fresh: true}})
	}
	if v := decideHeld("parent-0"); !v.Allowed {
		t.Fatalf("the first Read of the shared run refused: %s", v.Reason)
	}

	type child struct {
		name  string
		cmd   *exec.Cmd
		start io.WriteCloser // the word to go, on its stdin
		out   *bufio.Scanner
	}
	var children []*child
	for _, name := range []string{"a", "b"} {
		c := &child{name: name, cmd: exec.Command(os.Args[0], "-test.run=^TestHeldFileChild$", "-test.count=1")}
		c.cmd.Env = append(os.Environ(), heldChildEnv+"="+path, heldChildName+"="+name)
		c.cmd.Stderr = os.Stderr
		stdin, err := c.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.start = stdin
		stdout, err := c.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.out = bufio.NewScanner(stdout)
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
		children = append(children, c)
	}
	// Both start deciding together, once both have their file open.
	for _, c := range children {
		for c.out.Scan() {
			if strings.HasPrefix(c.out.Text(), `{"run":"","call":"","allowed":false,"reason":"","ready":true}`) {
				break
			}
		}
	}
	for _, c := range children {
		c.start.Write([]byte("go\n"))
		c.start.Close()
	}
	reported := map[string]decided{} // by call
	var reopened int64
	for _, c := range children {
		var verifications int64
		n := 0
		for c.out.Scan() {
			line := c.out.Text()
			if !strings.HasPrefix(line, "{") {
				continue // the test framework's own lines
			}
			var d decided
			if err := json.Unmarshal([]byte(line), &d); err != nil {
				t.Fatalf("child %s: %q: %v", c.name, line, err)
			}
			if d.Verifications > 0 {
				verifications = d.Verifications
				continue
			}
			reported[d.Call] = d
			n++
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child %s: %v", c.name, err)
		}
		if n != childReads+childOwn {
			t.Fatalf("child %s reported %d decisions, want %d", c.name, n, childReads+childOwn)
		}
		if verifications < 1 {
			t.Fatalf("child %s reported no verification of its file", c.name)
		}
		reopened += verifications - 1
	}
	// A process's writes go to the WAL and do not move the database file;
	// a checkpoint does. The children checkpointed, so this process
	// verifies its file again, and decides on the run as they left it:
	// its Read is past the bound.
	if v := decideHeld("parent-1"); v.Allowed || v.Reason != "max_calls" {
		t.Fatalf("a Read past the bound, decided by the process that held the file first: allowed=%v %s", v.Allowed, v.Reason)
	}
	if n := held.Verifications(); n != 2 {
		t.Fatalf("this process verified its file %d times, want 2: the children's checkpoints moved it", n)
	}
	reported["parent-0"] = decided{Run: "shared", Call: "parent-0", Allowed: true}
	reported["parent-1"] = decided{Run: "shared", Call: "parent-1", Reason: "max_calls"}

	allowed, bounded, contended := 0, 0, 0
	allowedBy := map[string]int{}
	for _, d := range reported {
		if d.Run == "shared" && d.Allowed {
			allowedBy[strings.SplitN(d.Call, "-", 2)[0]]++
		}
		switch {
		case d.Run != "shared":
			if !d.Allowed {
				t.Errorf("call %s in run %s refused (%s): nothing bounds it", d.Call, d.Run, d.Reason)
			}
		case d.Allowed:
			allowed++
		case d.Reason == "max_calls":
			bounded++
		case d.Reason == veto.ReasonStateUnavailable:
			contended++
		default:
			t.Errorf("call %s refused with %q", d.Call, d.Reason)
		}
	}
	if allowed != sharedReads || allowed+bounded+contended != 2*childReads+2 {
		t.Fatalf("shared run: %d allowed, %d refused by the bound, %d contended; want %d allowed of %d", allowed, bounded, contended, sharedReads, 2*childReads+2)
	}
	t.Logf("shared run: %d allowed, %d refused by the bound, %d refused as contended; the children verified their files again %d times; allowed by child %v", allowed, bounded, contended, reopened, allowedBy)

	s, err = Open(context.Background(), path, Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	stored := map[string]veto.EventKind{}
	for _, run := range []string{"shared", "own-a", "own-b"} {
		first, prev, chain, err := s.Chain(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if b := eventlog.VerifyChain(chain, first, prev); b != nil {
			t.Fatalf("run %s: %v", run, b)
		}
		evs, err := s.Events(ctx, run, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Kind != veto.EventAllowed && e.Kind != veto.EventDenied {
				continue
			}
			if _, twice := stored[e.CallID]; twice {
				t.Fatalf("call %s recorded twice", e.CallID)
			}
			stored[e.CallID] = e.Kind
		}
		// The run's projection is what its events fold to.
		mem := memstore.New()
		if err := mem.Append(ctx, run, 1, evs); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		want, err := mem.Load(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if got.Next != want.Next || !slices.Equal(got.History.Observations(), want.History.Observations()) {
			t.Fatalf("run %s: the stored projection (next %d, %d observations) is not its events' (next %d, %d)", run,
				got.Next, got.History.Len(), want.Next, want.History.Len())
		}
		gc, err := got.Tally.Calls(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wc, _ := veto.HistoryTally(&want.History).Calls(ctx)
		if !maps.Equal(gc, wc) {
			t.Fatalf("run %s: tally %v, its events add up to %v", run, gc, wc)
		}
		if run == "shared" && gc["Read"] != sharedReads {
			t.Fatalf("shared run: the tally counts %d Reads, want %d", gc["Read"], sharedReads)
		}
	}
	for call, d := range reported {
		kind, ok := stored[call]
		switch {
		case d.Reason == veto.ReasonStateUnavailable:
			if ok {
				t.Errorf("call %s was refused as contended and is recorded", call)
			}
		case !ok:
			t.Errorf("call %s was answered and is not recorded", call)
		case (kind == veto.EventAllowed) != d.Allowed:
			t.Errorf("call %s answered allowed=%v and recorded as %s", call, d.Allowed, kind)
		}
	}
	if len(stored) > len(reported) {
		t.Errorf("%d decisions recorded, %d answered", len(stored), len(reported))
	}
}

// TestHeldFileChild is a child process of TestTwoProcessesHoldOneFile;
// run alone, it does nothing.
func TestHeldFileChild(t *testing.T) {
	path, name := os.Getenv(heldChildEnv), os.Getenv(heldChildName)
	if path == "" {
		t.Skip("a child of TestTwoProcessesHoldOneFile")
	}
	checkpointAt = 128 << 10
	f := OpenFile(path, Options{Verify: true, BusyTimeout: 60 * time.Second})
	defer f.Close()
	g := heldGate(t, f)
	release, err := f.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	release()
	json.NewEncoder(os.Stdout).Encode(decided{Ready: true})
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	decide := func(c *veto.Call) veto.Verdict {
		release, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		return g.Decide(ctx, c)
	}
	own := 0
	for i := range childReads {
		c := &veto.Call{ID: fmt.Sprintf("%s-%d", name, i), Tool: "Read", Run: veto.Run{Ref: "shared", Fresh: true}}
		v := decide(c)
		enc.Encode(decided{Run: "shared", Call: c.ID, Allowed: v.Allowed, Reason: v.Reason})
		// An allowed call's result, every third one: the observation
		// moves the tally the other process reads.
		if v.Allowed && i%3 == 0 {
			func() {
				release, err := f.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer release()
				if err := g.ObserveCall(ctx, c, veto.Failed); err != nil {
					t.Fatal(err)
				}
			}()
		}
		if i%3 == 1 && own < childOwn {
			own++
			c := &veto.Call{ID: fmt.Sprintf("%s-own-%d", name, own), Tool: "Read", Run: veto.Run{Ref: "own-" + name, Fresh: true}}
			v := decide(c)
			enc.Encode(decided{Run: "own-" + name, Call: c.ID, Allowed: v.Allowed, Reason: v.Reason})
		}
	}
	enc.Encode(decided{Verifications: f.Verifications()})
}
