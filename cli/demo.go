package cli

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/hook"
)

//go:embed demo/session.jsonl
var demoFiles embed.FS

const demoDescription = `Run a bundled, recorded Claude Code session through veto: 29 tool calls (reads,
edits, builds, and a few destructive or exfiltrating attempts), each hook event through
the real hook path, the default policy and the embedded SQLite state, in a throw-away
workspace. Prints each call with its verdict and the rule that decided it, then a summary.`

type demoStep struct {
	Label  string          `json:"label"`
	Post   bool            `json:"post"`
	Event  json.RawMessage `json:"event"`
	Change *struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"change"`
}

func runDemo(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "demo", "", demoDescription)
	keep := fs.Bool("keep", false, "keep the throw-away workspace and state, and print where")
	if code, done := parse(e, fs, args); done {
		return code
	}
	root, err := os.MkdirTemp("", "veto-demo-")
	if err != nil {
		fmt.Fprintln(e.stderr, "veto demo:", err)
		return ExitDeny
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		fmt.Fprintln(e.stderr, "veto demo:", err)
		return ExitDeny
	}
	if !*keep {
		defer os.RemoveAll(root)
	}
	ws := filepath.Join(root, "project")
	state := filepath.Join(root, "state", "veto.db")
	for path, content := range map[string]string{
		".git/HEAD":             "ref: refs/heads/main\n",
		".git/config":           "[core]\n\tbare = false\n",
		".claude/settings.json": "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", \"command\": \"veto hook claude-code\"}]}]}}\n",
		"README.md":             "# demo\n\nA small Go program.\n",
		"go.mod":                "module demo\n\ngo 1.26\n",
		"main.go":               "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"Hello\") }\n",
		".env":                  "API_TOKEN=demo-not-a-real-token\n",
	} {
		full := filepath.Join(ws, path)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			fmt.Fprintln(e.stderr, "veto demo:", err)
			return ExitDeny
		}
	}
	f, err := demoFiles.Open("demo/session.jsonl")
	if err != nil {
		fmt.Fprintln(e.stderr, "veto demo:", err)
		return ExitDeny
	}
	defer f.Close()
	fmt.Fprintf(e.stdout, "A recorded Claude Code session, replayed through veto hook claude-code in %s\n\n", ws)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTOOL\tVERDICT\tRULE / REASON\tWHAT THE AGENT TRIED")
	calls, allowed := 0, 0
	rules := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var st demoStep
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			fmt.Fprintln(e.stderr, "veto demo: the bundled session is damaged:", err)
			return ExitDeny
		}
		if st.Change != nil {
			os.WriteFile(filepath.Join(ws, st.Change.Path), []byte(st.Change.Content), 0o644)
			fmt.Fprintf(tw, "\t\t\t\t(%s)\n", st.Label)
			continue
		}
		event := bytes.ReplaceAll(st.Event, []byte("$WS"), []byte(ws))
		var head struct {
			Name string `json:"hook_event_name"`
			Tool string `json:"tool_name"`
		}
		json.Unmarshal(event, &head)
		r := hookReply(ctx, claudecode.Adapter{ProjectDir: ws}, bytes.NewReader(event), hook.Options{State: state, Timeout: 5 * time.Second})
		if head.Name != "PreToolUse" {
			if r.Exit != 0 {
				fmt.Fprintf(tw, "\t%s\t%s\t%s\t(%s failed: %s)\n", head.Tool, "-", "-", head.Name, strings.TrimSpace(r.Stderr))
			}
			continue
		}
		calls++
		verdict, why := "allow", ""
		if r.Exit == 0 {
			allowed++
		} else {
			verdict, why = "DENY", ruleOf(r.Stderr)
			rules[why]++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", calls, head.Tool, verdict, why, st.Label)
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "\n%d calls: %d allowed, %d denied", calls, allowed, calls-allowed)
	if len(rules) > 0 {
		var parts []string
		for k, n := range rules {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(parts)
		fmt.Fprintf(e.stdout, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(e.stdout)
	if *keep {
		fmt.Fprintf(e.stdout, "Kept the workspace and the state; every decision: veto log --state %s\n", state)
	} else {
		fmt.Fprintln(e.stdout, "(The workspace and its state are gone; --keep keeps them for veto log.)")
	}
	return ExitAllow
}

// ruleOf pulls "rule/reason" out of a denial's text.
func ruleOf(stderr string) string {
	if i := strings.Index(stderr, "(rule "); i >= 0 {
		rest := stderr[i+len("(rule "):]
		if j := strings.IndexByte(rest, ')'); j >= 0 {
			return strings.Replace(rest[:j], ", reason ", "/", 1)
		}
	}
	if i := strings.Index(stderr, " call ("); i >= 0 {
		rest := stderr[i+len(" call ("):]
		if j := strings.IndexByte(rest, ')'); j >= 0 {
			return rest[:j]
		}
	}
	return "blocked"
}
