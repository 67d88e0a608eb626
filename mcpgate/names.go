package mcpgate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxToolName bounds a tool's own name (without mcp__NAME__), as the MCP
// specification does.
const MaxToolName = 128

// MaxServerName bounds the name a server is configured under.
const MaxServerName = 64

// ValidToolName reports whether name is one the gateway serves and
// decides: 1 to MaxToolName ASCII letters, digits, '_', '-' and '.', the
// MCP specification's set (2025-11-25) and the one its Go SDK checks.
// Any other name could carry a terminal's escape sequences or bidi
// controls to the screen of the person who reads it (in veto's listing or
// the agent's client), or a '/' that a tool glob reads as a separator.
func ValidToolName(name string) bool {
	if name == "" || len(name) > MaxToolName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return false
		}
	}
	return true
}

func toolNameByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b == '.'
}

// ValidServerName reports whether name may name a server: 1 to
// MaxServerName bytes of printable UTF-8 (letters, marks, digits,
// punctuation, symbols, spaces: no control or format character, so
// nothing a terminal acts on), and no "__", which would make
// mcp__NAME__TOOL ambiguous.
func ValidServerName(name string) bool {
	if name == "" || len(name) > MaxServerName || strings.Contains(name, "__") || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// recordedName is how a call of a tool whose name is not valid is
// decided and recorded: each byte outside the set spelled %XX. It holds
// '%', so no valid name reads the same, and nothing a terminal acts on.
func recordedName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if c := name[i]; toolNameByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// ShowDefinition is a definition's text as a person reads it on a
// terminal or a page: indented JSON, whole, of the same value, with every
// character that is not printable (controls, DEL, C1 controls, bidi and
// other format characters such as the invisible tag characters) written
// as its \u escape, so that the screen shows what the agent would read
// and nothing acts on the terminal. The text must be JSON (DefinitionOf's).
func ShowDefinition(text []byte) (string, error) {
	var ind bytes.Buffer
	if err := json.Indent(&ind, text, "", "  "); err != nil {
		return "", fmt.Errorf("mcpgate: a definition that is not JSON: %w", err)
	}
	var b strings.Builder
	b.Grow(ind.Len())
	s := ind.String()
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			// JSON from Marshal is valid UTF-8; anything else is not shown raw.
			b.WriteString(`\ufffd`)
		case r == '\n' || unicode.IsGraphic(r):
			b.WriteString(s[i : i+n])
		case r > 0xFFFF:
			hi, lo := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String(), nil
}

// utf16Pair is r's surrogate pair, as JSON escapes a rune beyond the
// basic plane.
func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}
