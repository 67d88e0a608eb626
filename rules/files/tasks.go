package files

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vetohq/veto"
)

// DefaultTaskFiles are the editor task files veto reads before they are
// written: a task in them can run on its own when a folder is opened
// (VS Code's "runOptions": {"runOn": "folderOpen"}, honoured by its forks).
var DefaultTaskFiles = []string{".vscode/tasks.json", "*.code-workspace"}

// autoRunTask denies a write of an editor task file whose content holds a
// task that runs when the folder is opened, and a write of one whose
// content veto cannot see (a command's, a copy's or a move's).
type autoRunTask struct{ s *Set }

func (r *autoRunTask) Info() veto.RuleInfo { return AutoRunTask.RuleInfo() }

func (r *autoRunTask) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.err != nil || w.unknown || !matchAny(&r.s.tasks, w.path, "") {
			continue
		}
		if w.command || w.param == "" || in.Descriptor.Has(veto.CapContentFromSource) {
			return taskUnseen.Deny(w.what()), nil
		}
		contents := contentOf(in)
		if len(contents) == 0 && !in.Descriptor.Has(veto.CapEdits) {
			return taskUnseen.Deny(w.what()), nil
		}
		for _, c := range contents {
			if runsOnOpen(c) {
				return taskRunsOnOpen.Deny(w.what()), nil
			}
		}
	}
	return veto.Allow(), nil
}

// contentOf returns every string the call's content parameters hold, at
// any depth (MultiEdit's edits are objects in a list).
func contentOf(in *veto.Input) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, arg := range in.Descriptor.ArgsWith(in.Call.Args, veto.RoleContent) {
		walk(arg.Value)
	}
	return out
}

// runsOnOpen reports whether text names the folderOpen trigger, in any
// case and through JSON's \u escapes, which the editor decodes: a task
// file (or a fragment an edit puts in one) that does is refused whole,
// wherever the word stands, since veto does not reproduce the editor's
// reading of a file with comments and trailing commas.
func runsOnOpen(text string) bool {
	if strings.Contains(text, `\u`) || strings.Contains(text, `\U`) {
		text = decodeEscapes(text)
	}
	return strings.Contains(strings.ToLower(text), "folderopen")
}

// decodeEscapes replaces each \uXXXX in s with its character.
func decodeEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			if n, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				if r := rune(n); utf8.ValidRune(r) {
					b.WriteRune(r)
					i += 5
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
