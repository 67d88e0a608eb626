package shell

import "strings"

// ArgvLine is the shell line that runs exactly the argument vector argv:
// each word single-quoted unless it is plain, so that no word is split,
// expanded or read as an assignment, a keyword or a redirection. A tool
// that takes its command as a vector (Codex's shell) is judged as this
// line: argv[0] the program, the rest its arguments.
func ArgvLine(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if plainWord(w) && (i > 0 || !reservedWord[w]) {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// plainWord reports whether the shell reads w as itself: letters, digits
// and punctuation that neither quotes, expands, globs nor assigns.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_./:,+@%^", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// reservedWord are the words the shell reads as syntax in a command's
// first place.
var reservedWord = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true,
	"esac": true, "for": true, "select": true, "while": true, "until": true, "do": true, "done": true, "function": true,
	"time": true, "coproc": true, "in": true}

// CommandText is the shell line a tool's command argument stands for: the
// text itself, or the line of an argument vector (a JSON array of
// strings, ArgvLine). ok is false for anything else.
func CommandText(v any) (line string, ok bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []any:
		argv := make([]string, 0, len(v))
		for _, e := range v {
			s, isString := e.(string)
			if !isString {
				return "", false
			}
			argv = append(argv, s)
		}
		return ArgvLine(argv), true
	case []string:
		return ArgvLine(v), true
	}
	return "", false
}
