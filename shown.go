package veto

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Shown is what a person is shown of a question, so that they can judge
// the call: its arguments through the tool's roles (the command, the path,
// the URL) and what the rules saw of it (the resolved target, the hosts).
// Every value that looks like a secret is masked before it is stored, and
// it is stored apart from the log (never in an event, a log line or the
// hash chain), bounded, until the question is answered or ShownFor has
// passed.
type Shown struct {
	Run      string    `json:"run"`
	CallID   string    `json:"call_id"`
	Tool     string    `json:"tool"`
	ArgsHash string    `json:"args_hash"` // of the arguments as decided: what an answer binds to
	Rule     string    `json:"rule"`
	Reason   string    `json:"reason"`
	Asked    time.Time `json:"asked"`
	Expires  time.Time `json:"expires"`
	Target   Target    `json:"target,omitzero"`
	Hosts    []string  `json:"hosts,omitempty"`
	Fields   []Field   `json:"fields"`
	Masked   int       `json:"masked,omitempty"` // how many values were masked
	Cut      bool      `json:"cut,omitempty"`    // a value or the list was longer than is kept
}

// Field is one argument as shown: its name, its role, and its value,
// masked (JSON text when it is not a string).
type Field struct {
	Name  string `json:"name"`
	Role  Role   `json:"role,omitempty"`
	Value string `json:"value"`
}

// Bounds of what is kept to show a person.
const (
	// ShownFor is how long the arguments of a question are kept when no
	// one answers it: the window veto approve and the page list.
	ShownFor = 24 * time.Hour
	// MaxShownValue is the most bytes of one value kept; a longer value is
	// cut, and says so.
	MaxShownValue = 4096
	// MaxShownFields is the most arguments kept of one call.
	MaxShownFields = 32
	// MaxShown is the most questions whose arguments a state holds; past
	// it, the oldest are dropped.
	MaxShown = 256
)

// EncodeShown returns the stored form of s.
func EncodeShown(s *Shown) ([]byte, error) { return json.Marshal(s) }

// DecodeShown parses a stored Shown.
func DecodeShown(b []byte) (Shown, error) {
	var s Shown
	if err := json.Unmarshal(b, &s); err != nil {
		return Shown{}, fmt.Errorf("veto: decode shown arguments: %w", err)
	}
	return s, nil
}

// keepShown holds what a person is shown of the question v asks about c.
// A failure is logged, without its text: the question stands, shown by
// its hash alone.
func (g *Gate) keepShown(ctx context.Context, a Approvals, c *Call, v *Verdict) {
	s := ShowCall(c, g.tools[c.Tool], v.Target)
	s.Run, s.CallID, s.Rule, s.Reason = v.Run, v.CallID, v.Rule, v.Reason
	s.Asked = c.Time.UTC()
	s.Expires = s.Asked.Add(ShownFor)
	if err := a.Keep(ctx, s); err != nil {
		g.log.LogAttrs(ctx, slog.LevelWarn, "question's arguments not kept", slog.String("call_id", v.CallID), slog.String("run", v.Run))
	}
}

// ShowCall is what a person is shown of call c of a tool described by d
// (nil: not described) whose target resolved to t: the arguments with a
// role first (command, path, URL, content, in the descriptor's order),
// then the others by name, every value masked (MaskSecrets), and the
// hosts of its URLs. It never holds a value unmasked.
func ShowCall(c *Call, d *Descriptor, t Target) Shown {
	s := Shown{Tool: c.Tool, ArgsHash: ArgsHash(c), Target: t}
	names := make([]string, 0, len(c.Args))
	for k := range c.Args {
		names = append(names, k)
	}
	rank := func(n string) int {
		if d == nil {
			return len(roleOrder)
		}
		if i := slices.Index(roleOrder, d.RoleOf(n)); i >= 0 {
			return i
		}
		return len(roleOrder)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	credWrite := false
	for _, n := range names {
		if r := roleOf(d, n); (r == RolePath || r == RoleMoved || r == "" && strings.Contains(strings.ToLower(n), "path")) && isCredentialPath(c.Args[n]) {
			credWrite = true
		}
	}
	for i, n := range names {
		if i == MaxShownFields {
			s.Cut = true
			break
		}
		r := roleOf(d, n)
		f := Field{Name: n, Role: r}
		var masked int
		switch {
		case credWrite && (r == RoleContent || r == "" && isContentName(n)):
			f.Value, masked = fmt.Sprintf("[masked: the content of a write to a credential file, %d bytes]", len(valueText(c.Args[n]))), 1
		case secretName(n):
			f.Value, masked = "[masked]", 1
		default:
			f.Value, masked = MaskSecrets(valueText(c.Args[n]))
		}
		if len(f.Value) > MaxShownValue {
			f.Value, s.Cut = cutUTF8(f.Value, MaxShownValue)+"…", true
		}
		s.Masked += masked
		s.Fields = append(s.Fields, f)
		if str, ok := c.Args[n].(string); ok && (r == RoleURL || r == RoleCommand) {
			s.Hosts = appendHosts(s.Hosts, str, r == RoleURL)
		}
	}
	return s
}

// roleOrder is the order of roles a person reads first.
var roleOrder = []Role{RoleCommand, RolePath, RoleMoved, RoleSourcePath, RoleURL, RoleContent, RoleInput}

// roleOf is the role a person is shown for the argument key: the one the
// rules judge it by, in any letter case (Descriptor.RoleOf).
func roleOf(d *Descriptor, name string) Role { return d.RoleOf(name) }

// valueText is an argument's value as text: a string as it is, anything
// else as JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "[a value veto cannot show]"
	}
	return string(b)
}

func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isContentName(n string) bool {
	n = strings.ToLower(n)
	return n == "content" || n == "contents" || n == "text" || n == "data" || n == "new_string" || n == "body"
}

// secretName reports whether an argument or variable named n holds a
// secret by its name alone.
func secretName(n string) bool {
	n = strings.ToLower(n)
	for _, w := range []string{"password", "passwd", "secret", "token", "api_key", "apikey", "api-key", "private_key", "credential", "authorization"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// isCredentialPath reports whether v names a file that holds
// credentials, by its name: what a write of content to it stores is a
// secret, whatever it looks like.
func isCredentialPath(v any) bool {
	p, ok := v.(string)
	if !ok {
		return false
	}
	p = strings.ToLower(p)
	base := p[strings.LastIndexByte(p, '/')+1:]
	switch base {
	case ".env", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", "credentials", "credentials.json",
		"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "authorized_keys", "secrets.yaml", "secrets.yml", "secrets.json":
		return true
	}
	if strings.HasPrefix(base, ".env.") {
		return true
	}
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	for _, dir := range []string{"/.ssh/", "/.aws/", "/.gnupg/", "/.kube/", "/.docker/", "/.config/gcloud/", "/.azure/"} {
		if strings.Contains("/"+p, dir) {
			return true
		}
	}
	return false
}

// appendHosts adds to hosts the host of every URL in text (the whole of
// it when whole; else each word holding "://"), once each, a host that
// looks like a secret left out. The shell rules judge a command's hosts
// themselves; these are the ones a person sees written in it.
func appendHosts(hosts []string, text string, whole bool) []string {
	words := []string{text}
	if !whole {
		words = strings.FieldsFunc(text, func(r rune) bool { return r < 128 && !isWordByte(byte(r)) })
	}
	for _, w := range words {
		if len(hosts) == MaxShownFields {
			break
		}
		if !whole {
			i := strings.Index(w, "://")
			if i < 0 {
				continue
			}
			j := i
			for j > 0 && isSchemeByte(w[j-1]) {
				j--
			}
			w = w[j:]
		}
		u, err := url.Parse(w)
		if err != nil || u.Hostname() == "" {
			continue
		}
		if h, m := MaskSecrets(u.Hostname()); m == 0 && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
