package shell

import (
	"errors"
	"strings"
)

// env -S (--split-string) splits its string into arguments by rules of
// its own, which are not the shell's (GNU coreutils' env(1)):
//   - unquoted spaces, tabs, newlines, vertical tabs, form feeds and
//     carriage returns separate arguments;
//   - '…' quotes everything but \\ and \', which stand for \ and ';
//   - "…" quotes too, and escapes and ${VAR} still apply inside;
//   - outside single quotes, \" \' \\ \# \$ stand for the character,
//     \f \n \r \t \v for the control character, \_ separates arguments
//     outside double quotes and is a space inside them, and \c ends the
//     string (an error inside double quotes); any other escape is an error;
//   - ${NAME} is the environment variable's value; a $ any other way is an
//     error;
//   - # at the start of an argument begins a comment to the end.
// On an error env runs nothing.

// errEnvSplit is a string env -S refuses: it runs nothing.
var errEnvSplit = errors.New("env -S refuses the string")

// envArg is one argument of a split string: its text, or unknown when it
// holds a variable whose value veto does not know.
type envArg struct {
	val     string
	unknown bool
}

// splitEnvS splits s as env -S does, with lookup giving variables' values
// (false: unknown).
func splitEnvS(s string, lookup func(name string) (string, bool)) ([]envArg, error) {
	var out []envArg
	var cur strings.Builder
	started, unknown := false, false
	sq, dq := false, false
	sep := true // at the start of an argument: # begins a comment
	end := func() {
		if started {
			out = append(out, envArg{val: cur.String(), unknown: unknown})
		}
		cur.Reset()
		started, unknown = false, false
	}
	i := 0
scan:
	for i < len(s) {
		c := s[i]
		switch c {
		case '\'':
			if dq {
				break
			}
			sq = !sq
			started, sep = true, false
			i++
			continue
		case '"':
			if sq {
				break
			}
			dq = !dq
			started, sep = true, false
			i++
			continue
		case ' ', '\t', '\n', '\v', '\f', '\r':
			if sq || dq {
				break
			}
			end()
			sep = true
			i++
			continue
		case '#':
			if sep && !sq && !dq {
				break scan
			}
		case '\\':
			if sq && (i+1 >= len(s) || s[i+1] != '\\' && s[i+1] != '\'') {
				break // a backslash in single quotes, as written
			}
			if i+1 >= len(s) {
				return nil, errEnvSplit
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '#', '$', '\'', '\\':
			case '_':
				if !dq {
					end()
					sep = true
					continue
				}
				e = ' '
			case 'c':
				if dq {
					return nil, errEnvSplit
				}
				break scan
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			case 'v':
				e = '\v'
			default:
				return nil, errEnvSplit
			}
			cur.WriteByte(e)
			started, sep = true, false
			continue
		case '$':
			if sq {
				break
			}
			name, ok := envVarName(s[i+1:])
			if !ok {
				return nil, errEnvSplit
			}
			i += len(name) + 3 // ${NAME}
			if v, known := lookup(name); known {
				cur.WriteString(v)
			} else {
				unknown = true
			}
			started, sep = true, false
			continue
		}
		cur.WriteByte(c)
		started, sep = true, false
		i++
	}
	if sq || dq {
		return nil, errEnvSplit
	}
	end()
	return out, nil
}

// envVarName is the NAME of "{NAME}…" at the start of s: a letter or
// underscore, then letters, digits and underscores, then "}".
func envVarName(s string) (string, bool) {
	if len(s) < 3 || s[0] != '{' {
		return "", false
	}
	j := 1
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > 1 && s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j == 1 || j >= len(s) || s[j] != '}' {
		return "", false
	}
	return s[1:j], true
}
