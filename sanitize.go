package veto

import (
	"strings"
)

// sanitizeMessage returns a rule's message if it is a short sentence that
// quotes no argument text, and a generic sentence otherwise. Rules are told
// never to quote arguments; this is the net under that promise.
func sanitizeMessage(msg string, c *Call, rule, reason string) string {
	generic := "Rule " + rule + " refused this call (" + reason + ")."
	if msg == "" || len(msg) > 400 {
		return generic
	}
	if hasControl(msg) {
		return generic
	}
	if quotesArgs(msg, c.Args) || quotesText(msg, c.Cwd) || quotesText(msg, c.Workspace) {
		return generic
	}
	return msg
}

// hasControl reports whether msg holds a control character or a
// replacement character (bytes that were not UTF-8).
func hasControl(msg string) bool {
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return true
		}
	}
	return false
}

// minQuote is the shortest argument value, and minQuoteWord the shortest
// word of one, treated as quoted when it appears in a message. Words are
// longer so that ordinary words a value shares with a message ("project")
// do not blank every message.
const (
	minQuote     = 6
	minQuoteWord = 8
)

func quotesArgs(msg string, v any) bool {
	switch v := v.(type) {
	case string:
		return quotesText(msg, v)
	case map[string]any:
		// Keys are parameter names, which messages may use to say which
		// argument is wrong; values are what must never be quoted.
		for _, e := range v {
			if quotesArgs(msg, e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if quotesArgs(msg, e) {
				return true
			}
		}
	}
	return false
}

// quotesText reports whether msg contains s, or any word of s of at least
// minQuoteWord bytes.
func quotesText(msg, s string) bool {
	if len(s) >= minQuote && strings.Contains(msg, s) {
		return true
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '/' || r == '=' || r == '"' || r == '\'' || r == ';' || r == '|' || r == '&'
	}) {
		if len(w) >= minQuoteWord && strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
