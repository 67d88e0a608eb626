package egress

import (
	"context"
	"strings"

	"github.com/vetohq/veto"
)

// Policy is where calls may reach: the mode and the policy's allow-list.
// The zero value is open mode.
type Policy struct {
	Mode  Mode // "" means Open
	Allow List // the policy's allow-list; a run's egress_allowed events add to it
	// Sends is the part of the allow-list uploads of local data and
	// installs from outside a registry may go to (Lists): the entries the
	// user's file gave, narrowed by later files. A list only other files
	// give narrows egress, and must not widen what may be sent.
	Sends List
}

// Check judges destinations (hosts or URLs; "" for one veto could not
// determine) under the policy plus the run's allow events, and returns the
// first that is not allowed (Allowed when all are).
func (p Policy) Check(ctx context.Context, in *veto.Input, dests []string) (Verdict, error) {
	list := p.Allow
	if p.Mode == Allowlist {
		if ek := in.Knowledge; ek != nil {
			added, err := ek.Egress(ctx)
			if err != nil {
				return Unresolvable, err
			}
			for _, h := range added {
				list = list.Add(h)
			}
		}
	}
	for _, d := range dests {
		if v := Judge(d, d != "", p.Mode, list); v != Allowed {
			return v, nil
		}
	}
	return Allowed, nil
}

// maxSniff bounds how many argument strings are looked at for URLs.
const maxSniff = 256

// Destinations returns the URLs a call reaches: the values of its
// descriptor's url parameters (and, for a network tool, the URLs written in
// its content parameters), or for a tool without a descriptor every
// argument string that is an http(s), ws(s) or ftp URL. ok is false when a
// url parameter holds something other than a string.
func Destinations(in *veto.Input) (out []string, ok bool) {
	if d := in.Descriptor; d != nil {
		// Through the roles, in any letter case: a tool may read "URL" as
		// its url (veto.Descriptor.ArgsWith).
		for _, arg := range d.ArgsWith(in.Call.Args, veto.RoleURL) {
			v := arg.Value
			if v == nil {
				continue
			}
			s, isString := v.(string)
			if !isString {
				return nil, false
			}
			out = append(out, s)
		}
		if d.Has(veto.CapNetwork) {
			// A network tool that takes its URLs inside text (Gemini CLI's
			// web_fetch reads them from its prompt) goes to each of them.
			for _, arg := range d.ArgsWith(in.Call.Args, veto.RoleContent) {
				if s, isString := arg.Value.(string); isString {
					out = append(out, Embedded(s)...)
				}
			}
		}
		return out, true
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n >= maxSniff {
			return
		}
		switch x := v.(type) {
		case string:
			n++
			if looksLikeURL(x) {
				out = append(out, strings.TrimSpace(x))
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(in.Call.Args)
	return out, true
}

// Embedded returns the http(s) URLs written inside text, each up to the
// first space, quote or bracket that ends it.
func Embedded(text string) []string {
	var out []string
	for i := 0; i+7 <= len(text) && len(out) < maxSniff; i++ {
		if text[i] != 'h' && text[i] != 'H' {
			continue
		}
		n := 0
		for _, p := range []string{"https://", "http://", "https:\\\\", "http:\\\\"} {
			if len(text)-i >= len(p) && strings.EqualFold(text[i:i+len(p)], p) {
				n = len(p)
				break
			}
		}
		if n == 0 {
			continue
		}
		end := i + n
		for end < len(text) && !strings.ContainsRune(" \t\r\n\"'<>()[]{}`", rune(text[end])) {
			end++
		}
		if u := strings.TrimRight(text[i:end], ".,;:!?"); len(u) > n {
			out = append(out, u)
		}
		i = end - 1
	}
	return out
}

// looksLikeURL reports whether an argument string is an http(s), ws(s)
// or ftp URL: the scheme, then "//", or, as WHATWG clients read these
// schemes, any number of slashes or backslashes, none included
// ("http:169.254.169.254/…" is that host), before a host.
func looksLikeURL(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"http:", "https:", "ws:", "wss:", "ftp:"} {
		rest, ok := strings.CutPrefix(s, p)
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, "//") {
			return true
		}
		// Without "//", only a string that reads as nothing else: one
		// word, its host starting as a name or an address does.
		if strings.ContainsAny(rest, " \t\n\r") {
			return false
		}
		rest = strings.TrimLeft(rest, "/\\")
		return rest != "" && (rest[0] == '[' || rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= '0' && rest[0] <= '9')
	}
	return false
}

// Settings are the egress section's effective settings, as the policy
// files give them: the mode and the allow-list as written.
type Settings struct {
	Mode  Mode     // "" means Open
	Allow []string // nil: none set
	// Sends are the entries of Allow the user's file gave (and later files
	// kept): where uploads and installs may go. Nil: none.
	Sends []string
}

// Compile parses the allow-list.
func (s Settings) Compile() (Policy, error) {
	l, err := ParseList(s.Allow)
	if err != nil {
		return Policy{}, err
	}
	sends, err := ParseList(s.Sends)
	if err != nil {
		return Policy{}, err
	}
	return Policy{Mode: s.Mode, Allow: l, Sends: sends}, nil
}

// Reason is the reason code and message of a verdict that refuses.
func (v Verdict) Reason() (code, message string) {
	switch v {
	case Metadata:
		return "egress_metadata", "The call reaches a link-local or cloud metadata address, which holds credentials."
	case Unresolvable:
		return "egress_unresolvable", "The call reaches a host veto cannot determine statically, so it cannot vouch for it."
	case NotListed:
		return "egress_not_listed", "The call reaches a host that is not on the egress allow-list; a person can add it with veto egress allow."
	}
	return "", ""
}

// Risk is how much a refusal for the verdict weighs: a metadata address
// holds credentials; an unknown host may be anything.
func (v Verdict) Risk() veto.Risk {
	switch v {
	case Metadata:
		return veto.RiskCritical
	case Unresolvable:
		return veto.RiskMedium
	case NotListed:
		return veto.RiskHigh
	}
	return veto.RiskNone
}

// Refusals are the verdicts that refuse, in a fixed order.
var Refusals = []Verdict{Metadata, Unresolvable, NotListed}

// SectionKey is the policy section egress.Settings are written under.
const SectionKey = "egress"
