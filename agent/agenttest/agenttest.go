// Package agenttest is what the adapters' tests share: golden files of
// the events an adapter decodes and of the replies it writes, and the
// check every decoded event must pass, for fuzzing. Only tests import it.
//
// An adapter's testdata/events.txtar holds payloads, each as NAME.json,
// and what the adapter makes of each, as NAME.want; testdata/replies.txtar
// holds its denial, allow and approve in the exact bytes the client reads.
// go test -update rewrites both from what the adapter does now: read the
// diff before committing it.
package agenttest

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files from what the adapter does now")

// Reason is the reason the golden denials carry: quotes, markup and
// non-ASCII text, so the files pin how each reply escapes them.
const Reason = `veto blocked this Bash call (rule shell.git_destructive, reason git_reset_hard): "git reset --hard" <discards> work & more — ask the user.`

// Describe is what a test compares of a decoded event: every field, in a
// stable text form, or the error.
func Describe(ev agent.Event, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	kind := map[agent.Kind]string{agent.Ignore: "ignore", agent.Start: "start", agent.Decide: "decide", agent.Observe: "observe"}[ev.Kind]
	if kind == "" {
		kind = fmt.Sprintf("kind(%d)", ev.Kind)
	}
	fmt.Fprintf(&b, "kind: %s\n", kind)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	line("session", ev.Session)
	line("cwd", ev.Cwd)
	line("project", ev.ProjectDir)
	if ev.Fresh {
		line("fresh", "true")
	}
	line("outcome", string(ev.Outcome))
	c := ev.Call
	line("call.id", c.ID)
	line("call.tool", c.Tool)
	if c.Args != nil {
		args, err := json.Marshal(c.Args)
		if err != nil {
			args = []byte("unencodable: " + err.Error())
		}
		line("call.args", string(args))
	}
	line("call.actor", strings.TrimSpace(c.Actor.Kind+" "+c.Actor.ID+" "+c.Actor.Agent))
	line("call.run", c.Run.Ref)
	line("call.cwd", c.Cwd)
	line("call.workspace", c.Workspace)
	return b.String()
}

// Events decodes every NAME.json of testdata/events.txtar with decode and
// compares what it makes with NAME.want.
func Events(t *testing.T, decode func([]byte) (agent.Event, error)) {
	t.Helper()
	path := filepath.Join("testdata", "events.txtar")
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var names []string
	var inputs = map[string][]byte{}
	for _, f := range ar.Files {
		switch {
		case strings.HasSuffix(f.Name, ".json"):
			name := strings.TrimSuffix(f.Name, ".json")
			names = append(names, name)
			// A payload's final newline is the archive's, not the event's.
			inputs[name] = []byte(strings.TrimSuffix(string(f.Data), "\n"))
		case strings.HasSuffix(f.Name, ".want"):
			want[strings.TrimSuffix(f.Name, ".want")] = string(f.Data)
		default:
			t.Fatalf("%s: %s is neither NAME.json nor NAME.want", path, f.Name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s holds no events", path)
	}
	out := &txtar.Archive{Comment: ar.Comment}
	for _, name := range names {
		ev, err := decode(inputs[name])
		got := Describe(ev, err)
		if err == nil {
			if verr := Valid(ev); verr != nil {
				t.Errorf("%s: %v", name, verr)
			}
		}
		if !*update && got != want[name] {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", name, got, want[name])
		}
		out.Files = append(out.Files, txtar.File{Name: name + ".json", Data: append(inputs[name], '\n')},
			txtar.File{Name: name + ".want", Data: []byte(got)})
	}
	if *update {
		if err := os.WriteFile(path, txtar.Format(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Replies compares the adapter's denial (with Reason, and with an empty
// reason), allow and approve with testdata/replies.txtar: for each, the
// exit code, then stdout and stderr byte for byte.
func Replies(t *testing.T, a agent.Adapter) {
	t.Helper()
	path := filepath.Join("testdata", "replies.txtar")
	out := &txtar.Archive{Comment: []byte("The replies, byte for byte: NAME.exit, NAME.stdout, NAME.stderr.\n")}
	add := func(name string, r agent.Reply) {
		out.Files = append(out.Files, txtar.File{Name: name + ".exit", Data: fmt.Appendf(nil, "%d\n", r.Exit)},
			txtar.File{Name: name + ".stdout", Data: []byte(r.Stdout)},
			txtar.File{Name: name + ".stderr", Data: []byte(r.Stderr)})
	}
	add("deny", a.Deny(Reason))
	add("deny-empty", a.Deny(""))
	add("allow", a.Allow(false))
	add("approve", a.Allow(true))
	if *update {
		if err := os.WriteFile(path, txtar.Format(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range ar.Files {
		want[f.Name] = string(f.Data)
	}
	for _, f := range out.Files {
		if w, ok := want[f.Name]; !ok || w != string(f.Data) {
			t.Errorf("%s:\ngot  %q\nwant %q", f.Name, f.Data, w)
		}
	}
	if len(want) != len(out.Files) {
		t.Errorf("%s holds %d files, want %d", path, len(want), len(out.Files))
	}
}

// Valid is what every event an adapter decodes without error must be: a
// known kind; a session for every event but one ignored; for a call to
// decide or observe, its tool, id and run, the run the session, an actor,
// and arguments that encode as JSON; an outcome only when observing.
func Valid(ev agent.Event) error {
	switch ev.Kind {
	case agent.Ignore:
		return nil
	case agent.Start:
		if ev.Session == "" {
			return fmt.Errorf("a start without a session: %+v", ev)
		}
		if !reflect.DeepEqual(ev.Call, veto.Call{}) {
			return fmt.Errorf("a start with a call: %+v", ev.Call)
		}
		return nil
	case agent.Decide, agent.Observe:
	default:
		return fmt.Errorf("an unknown kind %d", ev.Kind)
	}
	c := ev.Call
	switch {
	case ev.Session == "":
		return fmt.Errorf("a tool event without a session: %+v", ev)
	case c.Tool == "" || c.ID == "" || c.Run.Ref == "":
		return fmt.Errorf("a call without tool, id or run: %+v", c)
	case c.Run.Ref != ev.Session:
		return fmt.Errorf("the call's run %q is not the session %q", c.Run.Ref, ev.Session)
	case c.Actor.Kind != "agent" || c.Actor.ID == "":
		return fmt.Errorf("the call's actor %+v is no agent", c.Actor)
	case (ev.Kind == agent.Observe) != (ev.Outcome != ""):
		return fmt.Errorf("outcome %q for kind %d", ev.Outcome, ev.Kind)
	case ev.Outcome != "" && !ev.Outcome.Valid():
		return fmt.Errorf("outcome %q", ev.Outcome)
	}
	if _, err := json.Marshal(c.Args); err != nil {
		return fmt.Errorf("arguments that do not encode: %v", err)
	}
	return nil
}

// Fuzz checks one input: decoding it twice gives the same answer, and
// that answer is an error or a valid event.
func Fuzz(t *testing.T, decode func([]byte) (agent.Event, error), b []byte) {
	t.Helper()
	e1, err1 := decode(b)
	e2, err2 := decode(b)
	if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(e1, e2) {
		t.Fatalf("two decodes differ: %v %v", err1, err2)
	}
	if err1 != nil {
		return
	}
	if err := Valid(e1); err != nil {
		t.Fatal(err)
	}
}

// Seeds adds every payload of testdata/events.txtar to f's corpus.
func Seeds(f *testing.F) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "events.txtar"))
	if err != nil {
		f.Fatal(err)
	}
	var names []string
	data := map[string][]byte{}
	for _, file := range ar.Files {
		if strings.HasSuffix(file.Name, ".json") {
			names = append(names, file.Name)
			data[file.Name] = []byte(strings.TrimSuffix(string(file.Data), "\n"))
		}
	}
	sort.Strings(names)
	for _, n := range names {
		f.Add(data[n])
	}
}
