package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vetohq/veto/clients"
)

// Registered is the shortest timeout the client's settings give veto's
// hook for this client (0: none found): the user's file, and the
// project's in dir or the nearest directory above it that has one. A
// client that stops waiting lets the call run (Gemini CLI, Codex), so
// veto-hook answers within half of it, whatever the file says now: a
// timeout lowered by hand after veto init lowers veto's budget too. A
// file that does not read or decode is passed over.
func Registered(c *clients.Client, dir string) time.Duration { return RegisteredFor(c, dir, "") }

// RegisteredFor is Registered for one event of the client's (its key in
// the settings' hooks; "": every event).
func RegisteredFor(c *clients.Client, dir, event string) time.Duration {
	st := c.Settings
	if st.TimeoutKey == "" || st.TimeoutUnit <= 0 {
		return 0
	}
	var files []string
	if home, err := os.UserHomeDir(); err == nil && st.User != "" {
		p := filepath.Join(home, st.User)
		if x := os.Getenv(st.UserDirEnv); st.UserDirEnv != "" && x != "" {
			p = filepath.Join(x, filepath.Base(st.User))
		}
		files = append(files, p)
	}
	for d := dir; d != "" && filepath.IsAbs(d); {
		p := filepath.Join(d, st.Project)
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	var least time.Duration
	for _, p := range files {
		if d := registeredIn(c, p, event); d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	return least
}

// registeredIn is the shortest timeout of veto's entries for c in the
// settings file p, under event ("": any), 0: none. A file that does not name the client at all
// is not decoded; entries are decoded only as far as their command and
// timeout fields.
func registeredIn(c *clients.Client, p, event string) time.Duration {
	b, ok := readFile(p, 1<<20)
	if !ok || !bytes.Contains(b, []byte(c.Name)) {
		return 0
	}
	var file struct {
		Hooks map[string][]map[string]json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(b, &file) != nil {
		return 0
	}
	st := c.Settings
	var least time.Duration
	note := func(m map[string]json.RawMessage) {
		var cmd string
		if json.Unmarshal(m[st.CommandKey], &cmd) != nil {
			return
		}
		if !strings.HasSuffix(cmd, "veto-hook "+c.Name) && !strings.HasSuffix(cmd, "veto-hook' "+c.Name) &&
			!strings.HasSuffix(cmd, " hook "+c.Name) {
			return
		}
		var f float64
		if json.Unmarshal(m[st.TimeoutKey], &f) != nil {
			return
		}
		if d := time.Duration(f * float64(st.TimeoutUnit)); f > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	for name, list := range file.Hooks {
		// One event's, or every event's but those veto waits on, whose
		// long timeout is not the others' budget.
		if (event != "" && name != event) || (event == "" && waits(c, name)) {
			continue
		}
		for _, item := range list {
			if !st.Grouped {
				note(item)
				continue
			}
			var inner []map[string]json.RawMessage
			if json.Unmarshal(item["hooks"], &inner) != nil {
				continue
			}
			for _, h := range inner {
				note(h)
			}
		}
	}
	return least
}

// Waiting is the client's event, named in the hook event in (its
// hook_event_name), on which veto may wait for a person (an event of the
// table with a Timeout); nil for any other.
func Waiting(c *clients.Client, in []byte) *clients.Event {
	for i := range c.Events {
		e := &c.Events[i]
		// Every call's event passes here: only one that names a waiting
		// event at all is decoded.
		if e.Timeout <= 0 || !bytes.Contains(in, []byte(`"`+e.Name+`"`)) {
			continue
		}
		var ev struct {
			Name string `json:"hook_event_name"`
		}
		if json.Unmarshal(in, &ev) == nil && ev.Name == e.Name {
			return e
		}
	}
	return nil
}

// waits reports whether the client's event of this name is one veto may
// wait on: its long timeout is not the budget of the other events.
func waits(c *clients.Client, name string) bool {
	for _, e := range c.Events {
		if e.Name == name {
			return e.Timeout > 0
		}
	}
	return false
}

func waitingOf(c *clients.Client, in []byte) *clients.Event {
	if c == nil {
		return nil
	}
	return Waiting(c, in)
}
