package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto/mcpgate"
	"github.com/vetohq/veto/presence"
)

// runMCPPins is veto mcp pins and veto mcp approve: the server's tools and
// their pins, and a person's approval of definitions by the hashes pins
// --show printed.
func runMCPPins(ctx context.Context, e *env, sub string, args []string) int {
	synopsis := "pins --name NAME [--show]"
	if sub == "approve" {
		synopsis = "approve --name NAME HASH..."
	}
	fs := newFlags(e, "mcp "+sub, synopsis, mcpDescription)
	name := fs.String("name", "", "the server's name")
	show := fs.Bool("show", false, "pins: print, whole, the definition last seen of each tool awaiting approval and its hash")
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database instead (a DSN)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if !mcpgate.ValidServerName(*name) {
		fmt.Fprintf(e.stderr, "veto mcp %s: --name is required (the server's name: printable, at most 64 bytes, without \"__\")\n", sub)
		return ExitUsage
	}
	var hashes []string
	switch {
	case sub == "pins" && fs.NArg() > 0:
		fmt.Fprintln(e.stderr, "veto mcp pins: takes no arguments")
		return ExitUsage
	case sub == "approve":
		var bad string
		if hashes, bad = definitionHashes(fs.Args()); len(hashes) == 0 || bad != "" {
			fmt.Fprintf(e.stderr, "veto mcp approve: name each definition to approve by the hash veto mcp pins --name %s --show prints (sha256: and 64 hex digits)", shellWord(*name))
			if bad != "" {
				fmt.Fprintf(e.stderr, "; %s is not one (a tool's name is not enough: it does not say which definition you read)", strconv.Quote(bad))
			}
			fmt.Fprintln(e.stderr)
			return ExitUsage
		}
	}
	st, err := openServiceState(ctx, *state, *pg, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto mcp %s: cannot open the state: %s\n", sub, stateCause(err))
		return ExitDeny
	}
	defer st.close()
	pins, err := openPins(ctx, st)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto mcp %s: cannot open the pin tables: %s\n", sub, stateCause(err))
		return ExitDeny
	}
	// The state is held for each use, not across the person's answer.
	use := func(f func() error) error {
		if st.acquire != nil {
			release, err := st.acquire(ctx)
			if err != nil {
				return fmt.Errorf("cannot use the state: %s", stateCause(err))
			}
			defer release()
		}
		return f()
	}
	var list []mcpgate.Pin
	if err := use(func() (err error) {
		if list, err = pins.List(ctx, *name); err != nil {
			return errors.New("the pins could not be read")
		}
		return nil
	}); err != nil {
		fmt.Fprintf(e.stderr, "veto mcp %s: %v\n", sub, err)
		return ExitDeny
	}
	if sub == "approve" {
		return approvePins(ctx, e, use, pins, *name, list, hashes)
	}
	printPins(e, *name, list, *show)
	return ExitAllow
}

// printPins prints the server's tools and their pins and, with show, each
// definition awaiting approval whole (or why it is not shown) with the
// hash that approves it. Every name is quoted and every definition
// escaped: what the server wrote never acts on the terminal.
func printPins(e *env, server string, list []mcpgate.Pin, show bool) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSTATUS\tSEEN\tCHANGED")
	for _, pin := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strconv.Quote(pin.Tool), pinStatus(pin), short(pin.Seen), pin.Changed.UTC().Format(time.RFC3339))
	}
	tw.Flush()
	if !show {
		return
	}
	for _, pin := range list {
		if !pin.Awaiting() {
			continue
		}
		fmt.Fprintf(e.stdout, "\n%s (%s), %s, definition %s", strconv.Quote(pin.Tool), strconv.Quote(mcpgate.ToolName(server, pin.Tool)),
			strings.TrimSuffix(pinStatus(pin), ": awaits approval"), pin.Seen)
		text, why := shownDefinition(pin)
		if why != "" {
			fmt.Fprintf(e.stdout, ": not shown: %s, so it cannot be approved.\n", why)
			continue
		}
		fmt.Fprintf(e.stdout, ", whole:\n%s\nto pin it: veto mcp approve --name %s %s\n", text, shellWord(server), pin.Seen)
	}
}

// shownDefinition is a pin's definition as a person reads it, or why it
// cannot be shown whole.
func shownDefinition(pin mcpgate.Pin) (text, why string) {
	if !pin.Whole() {
		if pin.Definition == "" {
			return "", fmt.Sprintf("it is over %d KiB, more than veto shows whole", mcpgate.MaxDefinition>>10)
		}
		return "", "veto kept only part of it (an older veto cut it)"
	}
	text, err := mcpgate.ShowDefinition([]byte(pin.Definition))
	if err != nil {
		return "", "its stored text is not JSON"
	}
	return text, ""
}

func pinStatus(pin mcpgate.Pin) string {
	switch {
	case !pin.Whole():
		return "refused: over 64 KiB"
	case pin.Seen == pin.Pinned:
		return "pinned"
	case pin.Pinned == "":
		return "new: awaits approval"
	}
	return "changed: awaits approval"
}

func short(hash string) string {
	h := strings.TrimPrefix(hash, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// definitionHashes reads approve's arguments: each a definition's hash,
// sha256:HEX as pins --show prints it (or the 64 hex digits alone). bad
// is the first that is not one.
func definitionHashes(args []string) (hashes []string, bad string) {
	for _, a := range args {
		h := strings.ToLower(strings.TrimPrefix(a, "sha256:"))
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			return nil, a
		}
		hashes = append(hashes, "sha256:"+h)
	}
	return hashes, ""
}

// approvePins pins the definitions of the hashes given, once a person
// confirmed them on the terminal (presence). Each hash must be the
// definition the server shows now of a tool awaiting approval, whole:
// else nothing is asked and nothing pinned. After the answer each pin
// still binds to its hash, so a definition seen while the person
// answered stays refused.
func approvePins(ctx context.Context, e *env, use func(func() error) error, pins *mcpgate.Pins, server string, list []mcpgate.Pin, hashes []string) int {
	bySeen := map[string]mcpgate.Pin{}
	for _, pin := range list {
		bySeen[pin.Seen] = pin
	}
	var shown []mcpgate.Pin
	var details [][2]string
	for _, h := range hashes {
		pin, ok := bySeen[h]
		switch {
		case !ok:
			fmt.Fprintf(e.stderr, "veto mcp approve: no tool of %s shows the definition %s now: it changed since veto mcp pins --show printed it, or never was; read it again (veto mcp pins --name %s --show). Nothing was pinned.\n",
				strconv.Quote(server), h, shellWord(server))
			return ExitDeny
		case !pin.Awaiting():
			fmt.Fprintf(e.stderr, "veto mcp approve: %s is pinned at %s already. Nothing was pinned.\n", strconv.Quote(mcpgate.ToolName(server, pin.Tool)), h)
			return ExitDeny
		case !pin.Whole():
			_, why := shownDefinition(pin)
			fmt.Fprintf(e.stderr, "veto mcp approve: %s cannot be approved: %s. Nothing was pinned.\n", strconv.Quote(mcpgate.ToolName(server, pin.Tool)), why)
			return ExitDeny
		}
		if !containsPin(shown, pin) {
			shown = append(shown, pin)
			details = append(details, [2]string{strconv.Quote(mcpgate.ToolName(server, pin.Tool)),
				strings.TrimSuffix(pinStatus(pin), ": awaits approval") + ", definition " + pin.Seen})
		}
	}
	t, err := presence.Prove(ctx, presence.Question{Command: "veto mcp approve",
		Action:  fmt.Sprintf("PIN the definitions veto mcp pins --show printed of %d tool(s) of the MCP server %s: the gateway lets them be called", len(shown), strconv.Quote(server)),
		Details: details, Confirm: true})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp approve:", err)
		return ExitDeny
	}
	defer t.Close()
	code := ExitAllow
	for _, pin := range shown {
		full := strconv.Quote(mcpgate.ToolName(server, pin.Tool))
		var ok bool
		err := use(func() (err error) {
			ok, err = pins.ApproveSeen(ctx, server, pin.Tool, pin.Seen, time.Now())
			return err
		})
		switch {
		case err != nil:
			fmt.Fprintln(e.stderr, "veto mcp approve: the pins could not be written")
			return ExitDeny
		case !ok:
			fmt.Fprintf(e.stderr, "veto mcp approve: %s changed again while you answered; it still awaits approval\n", full)
			code = ExitDeny
		default:
			fmt.Fprintf(e.stdout, "approved %s (definition %s)\n", full, pin.Seen)
			fmt.Fprintf(t, "\r\napproved %s", full)
		}
	}
	fmt.Fprint(t, "\r\n")
	return code
}

func containsPin(list []mcpgate.Pin, p mcpgate.Pin) bool {
	for _, q := range list {
		if q.Tool == p.Tool {
			return true
		}
	}
	return false
}

// shellWord is s as one word of a shell command a person may copy: as it
// is when it holds only characters no shell treats specially, else in
// single quotes. s is printable (ValidServerName), so nothing in it acts
// on the terminal either.
func shellWord(s string) string {
	safe := s != ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-.,:/@+=", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
