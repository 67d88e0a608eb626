package cli

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"text/tabwriter"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/state"
)

//go:embed examples/calls.jsonl
var examples embed.FS

const checkDescription = `Decide one tool call and print the verdict as JSON, under the policy files that apply
to the call's working directory (see veto policy show).

The call is read as one JSON object on stdin:

  {"tool": "Read", "args": {"file_path": "README.md"}, "cwd": "/work/project",
   "call_id": "c1", "actor": {"kind": "user", "id": "alice", "agent": ""},
   "run": {"ref": "r1", "fresh": true, "prior_turns": 0, "prior_calls": 0, "retries": 0,
           "allowed_tools": ["Read"], "trust_zone": "local"},
   "history": {"observations": [{"call_id": "c0", "tool": "Read", "outcome": "succeeded",
                                 "target": {"kind": "file", "id": "/work/project/go.mod"}}]}}

Only "tool" is required. Without "run" the call is a fresh run of its own; a run that
is not fresh needs "history" (the runtime's authoritative record) or its history is
incomplete. Exit status: 0 allow, 1 deny, 2 bad input (the message names the field).

With --example, decide the bundled example calls instead and print a table.`

func runCheck(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "check", "[--example] [--policy FILE] [--log-level LEVEL] < call.json", checkDescription)
	example := fs.Bool("example", false, "decide the bundled example calls and print a table")
	level := fs.String("log-level", "off", "log decisions to stderr as JSON at this level: off, debug, info, warn, error")
	policyFile := fs.String("policy", "", "a policy file applied after the user's and the project's")
	stateFile := fs.String("state", "", "record the decision in this SQLite state file, and decide on the run's history there")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto check: unexpected argument %q; the call is read from stdin\n", fs.Arg(0))
		return ExitUsage
	}
	log, err := logger(e.stderr, *level)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto check:", err)
		return ExitUsage
	}
	if *example {
		g, err := newGate(log)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto check: cannot build the gate:", err)
			return ExitDeny
		}
		return checkExamples(ctx, e, g)
	}
	c, code := readCall(e, "veto check")
	if code != 0 {
		return code
	}
	p, err := loadPolicy(c.Cwd, c.Workspace, *policyFile)
	if err != nil {
		return policyRefusal(e, &c, err)
	}
	var store veto.Store = memstore.New()
	if *stateFile != "" {
		// A refusal's cause rides in the store's error; the gate names it
		// in the verdict and the log line.
		s, done, err := state.Once(ctx, state.Name{Path: *stateFile}, 0)
		if err != nil {
			// Fail closed: the gate denies on a store it cannot use.
			store = unavailableStore{err}
		} else {
			defer done()
			store = s
		}
	}
	g, err := p.Gate(policy.BuildOptions{Store: store, Logger: log})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto check: cannot build the gate:", err)
		return ExitDeny
	}
	v := g.Decide(ctx, &c)
	if err := writeJSON(e.stdout, v); err != nil {
		return ExitDeny
	}
	if v.Allowed {
		return ExitAllow
	}
	return ExitDeny
}

// readCall reads one call in veto's JSON form from stdin; a non-zero code
// means it could not, and the message was written.
func readCall(e *env, who string) (veto.Call, int) {
	limits := veto.DefaultLimits
	b, err := io.ReadAll(io.LimitReader(e.stdin, int64(veto.MaxCallJSON(limits))+1))
	if err != nil {
		fmt.Fprintln(e.stderr, who+": cannot read stdin:", err)
		return veto.Call{}, ExitUsage
	}
	c, err := veto.DecodeCall(b, limits)
	if err != nil {
		fmt.Fprintln(e.stderr, who+":", err)
		return veto.Call{}, ExitUsage
	}
	return c, 0
}

// unavailableStore is a store that could not be opened: every use fails,
// so the gate denies state_unavailable.
type unavailableStore struct{ err error }

func (u unavailableStore) Load(context.Context, string) (veto.RunState, error) {
	return veto.RunState{}, u.err
}
func (u unavailableStore) Append(context.Context, string, uint64, []veto.Event) error {
	return u.err
}
func (u unavailableStore) Events(context.Context, string, uint64) ([]veto.Event, error) {
	return nil, u.err
}

// absDir returns dir as an absolute path.
func absDir(dir string) (string, error) {
	return filepath.Abs(dir)
}

// newGate builds the gate of veto's embedded default policy alone: no
// policy file applies.
func newGate(log *slog.Logger) (*veto.Gate, error) {
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, nil)
	if err != nil {
		return nil, err
	}
	return gateFor(p, log)
}

type example struct {
	Name   string          `json:"name"`
	Expect string          `json:"expect"`
	Call   json.RawMessage `json:"call"`
}

func checkExamples(ctx context.Context, e *env, g *veto.Gate) int {
	f, err := examples.Open("examples/calls.jsonl")
	if err != nil {
		fmt.Fprintln(e.stderr, "veto check:", err)
		return ExitDeny
	}
	defer f.Close()
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXAMPLE\tTOOL\tVERDICT\tSTAGE\tRULE/REASON\tEXPECTED")
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	allowed, denied, wrong := 0, 0, 0
	for sc.Scan() {
		var ex example
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			fmt.Fprintln(e.stderr, "veto check: bundled example:", err)
			return ExitDeny
		}
		c, err := veto.DecodeCall(ex.Call, veto.DefaultLimits)
		if err != nil {
			fmt.Fprintf(e.stderr, "veto check: bundled example %s: %v\n", ex.Name, err)
			return ExitDeny
		}
		v := g.Decide(ctx, &c)
		verdict, why := "allow", ""
		if v.Allowed {
			allowed++
		} else {
			denied++
			verdict, why = "deny", v.Reason
			if v.Rule != "" {
				why = v.Rule + "/" + v.Reason
			}
			if v.ToolDenial != "" {
				why += "/" + string(v.ToolDenial)
			}
		}
		mark := "ok"
		if verdict != ex.Expect {
			mark, wrong = "WRONG (want "+ex.Expect+")", wrong+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ex.Name, v.Tool, verdict, v.Stage, why, mark)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(e.stderr, "veto check:", err)
		return ExitDeny
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "\n%d calls: %d allowed, %d denied, %d not as expected\n", allowed+denied, allowed, denied, wrong)
	if wrong > 0 {
		return ExitDeny
	}
	return ExitAllow
}

func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return errors.New("cannot encode the verdict")
	}
	_, err := w.Write(buf.Bytes())
	return err
}
