package shell_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
)

// The commands below are data: the analyzer parses them and never runs
// them, and neither does anything else here.

// unseenForms are the ways a command can hand a shell, source, eval or an
// interpreter a script veto cannot see. $UNSEEN is never assigned and
// unseen is no program veto knows, so the script is unknowable whatever
// ARG (a single-quoted literal) and the wrapper W are.
var unseenForms = []string{
	`W bash -c "$UNSEEN" ARG`,
	`W sh -c "$(unseen)" ARG`,
	`W eval "$UNSEEN" ARG`,
	`echo "$UNSEEN" ARG | W sh`,
	`printf '%s\n' "$UNSEEN" ARG | W bash -s`,
	`W bash <<< "$UNSEEN"ARG`,
	`W bash <(unseen ARG)`,
	`W source <(unseen ARG)`,
	`W . "$UNSEEN" ARG`,
	`W python3 -c "$UNSEEN" ARG`,
	`W python3 -Bc "$UNSEEN" ARG`,
	`W node -pe "$UNSEEN" ARG`,
	`W perl -le "$UNSEEN" ARG`,
	`W ruby -we "$UNSEEN" ARG`,
	`W php -r "$UNSEEN" ARG`,
	`W awk "$UNSEEN" ARG`,
	`W awk -f "$UNSEEN" ARG`,
	`W php -f "$UNSEEN" ARG`,
	`unseen ARG | W bash`,
	`unseen ARG | W python3`,
	`unseen ARG | W sh -s -- ARG`,
	`W bash -s ARG < <(unseen)`,
	`W $UNSEEN ARG`,
	`W "$(unseen)" ARG`,
	`W bash "$UNSEEN" ARG`,
	`W python3 "$UNSEEN" ARG`,
	"W bash -s ARG <<EOF\n$UNSEEN\nEOF\n",
	"W python3 - ARG <<EOF\n$(unseen)\nEOF\n",
	`W git -c alias.x="!$UNSEEN" x ARG`,
	`W git -c core.pager="$UNSEEN" log ARG`,
	`W watch "$UNSEEN" ARG`,
	`unseen | W xargs -I{} sh -c {} ARG`,
	`W find . -exec sh -c "$UNSEEN" ARG \;`,
	`c="$UNSEEN"; W $c ARG`,
	`c="x $(unseen)"; W $c ARG`,
	`f(){ bash -c "$1"; }; W f "$UNSEEN" ARG`,
	`W su -c "$UNSEEN" ARG`,
	`unseen ARG | W su`,
	`W sed -n "1e $UNSEEN" ARG`,
	`W sed "$UNSEEN" ARG`,
	`W tar -cf x --checkpoint-action=exec="$UNSEEN" ARG`,
	`W tar -I "$UNSEEN" -cf x ARG`,
	`W rsync -e "$UNSEEN" ARG host:x`,
	`W ssh -o ProxyCommand="$UNSEEN" ARG`,
	`W vim -c "$UNSEEN" ARG`,
	`W sqlite3 db "$UNSEEN" ARG`,
	`W psql -c "$UNSEEN" ARG`,
	`W gdb -ex "$UNSEEN" ARG`,
	`W git rebase --exec "$UNSEEN" ARG`,
	`W git submodule foreach "$UNSEEN" ARG`,
	`W flock /tmp/l -c "$UNSEEN" ARG`,
	`W sometool --exec "$UNSEEN" ARG`,
	`W sometool --command="$UNSEEN" ARG`,
}

// unseenWrappers are put before the program that runs the script.
var unseenWrappers = []string{"", "sudo", "env A=1", "nohup", "timeout 5", "command", "nice -n 1", "exec", "sudo -u root --",
	"flock /tmp/l", "flock -n /tmp/l", "strace -f -o t.txt", "systemd-run --user", "valgrind -q", "poetry run", "uv run",
	"nsenter -t 1 -m", "chronic", "proxychains4 -q", "perf record --", "cmake -E chdir /tmp", "direnv exec /tmp",
	"aws-vault exec p --"}

func singleQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// FuzzUnseenScript holds that a script the analyzer could not see never
// comes out without a shell.analyzer finding (cannot_vouch, or another
// refusal such as decode_to_shell or parse_failed), whatever the literal
// arguments around it and the wrapper before it.
func FuzzUnseenScript(f *testing.F) {
	for i := range unseenForms {
		f.Add(uint8(i), uint8(i), "x")
		f.Add(uint8(i), uint8(i+3), "a b; c")
	}
	f.Add(uint8(3), uint8(0), "'\"$(x)\n")
	f.Fuzz(func(t *testing.T, form, wrap uint8, arg string) {
		src := unseenForms[int(form)%len(unseenForms)]
		src = strings.ReplaceAll(src, "W ", unseenWrappers[int(wrap)%len(unseenWrappers)]+" ")
		src = strings.ReplaceAll(src, "ARG", singleQuoted(arg))
		r := shell.Analyze(src, env)
		for _, fd := range r.Findings {
			if fd.Rule == shell.RuleAnalyzer {
				return
			}
		}
		t.Fatalf("%q: no shell.analyzer finding: %+v", src, r)
	})
}

// TestUnseenForms runs every form with every wrapper once, so that the
// property holds in an ordinary test run too.
func TestUnseenForms(t *testing.T) {
	for _, form := range unseenForms {
		for _, wrap := range unseenWrappers {
			src := strings.ReplaceAll(form, "W ", wrap+" ")
			src = strings.ReplaceAll(src, "ARG", singleQuoted("x"))
			r := shell.Analyze(src, env)
			found := false
			for _, fd := range r.Findings {
				found = found || fd.Rule == shell.RuleAnalyzer
			}
			if !found {
				t.Errorf("%q: no shell.analyzer finding", src)
			}
		}
	}
}
