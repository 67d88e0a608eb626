package supervise_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vetohq/veto/supervise"
)

// A command's main calls Child first (the supervisor re-executes its own binary as the child), then Run with a
// decider. The decider writes the stderr line of a refusal; Run writes nothing.
func Example() {
	supervise.Child() // first thing in main: never returns in the supervisor's child

	if f := supervise.Probe(); !f.UserNotif {
		fmt.Fprintln(os.Stderr, "cannot supervise:", f.Why)
		return
	}
	home, _ := os.UserHomeDir()
	secrets := filepath.Join(home, ".aws") + "/"
	code, err := supervise.Run(context.Background(), supervise.Config{
		Argv: []string{"make", "test"},
		Decide: func(r supervise.Request) supervise.Verdict {
			// Fast for the many opens for reading that are of no interest.
			if r.Kind == supervise.Open && !r.Write && !strings.HasPrefix(r.Path, secrets) {
				return supervise.Verdict{Allow: true}
			}
			if r.Kind == supervise.Open && strings.HasPrefix(r.Path, secrets) {
				v := supervise.Verdict{Rule: "veto.files.credential", Reason: "credential_read"}
				fmt.Fprintf(os.Stderr, "veto: refused %s (%s: %s)\n", r.Kind, v.Rule, v.Reason)
				return v
			}
			return supervise.Verdict{Allow: true}
		},
		Landlock: &supervise.Floor{WriteRoots: []string{"."}, DenyRead: []string{filepath.Join(home, ".aws")}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(125)
	}
	os.Exit(code)
}
