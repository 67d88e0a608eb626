package veto

import (
	"math"
	"strings"
)

// MaskSecrets returns s with every part that looks like a secret replaced
// by "[masked]", and how many parts it replaced: PEM private keys, the
// known token formats (GitHub's ghp_… and github_pat_…, sk-… API keys,
// AWS access key ids AKIA…/ASIA…, Slack's xox?-…, veto's own veto_…,
// GitLab's glpat-…, JWTs), the value of an assignment or option whose
// name says secret (PASSWORD=…, --token …), and long strings of high
// entropy. It errs on the side of masking: a person sees less of a hash
// rather than a key.
func MaskSecrets(s string) (string, int) {
	s, n := maskPEM(s)
	var b strings.Builder
	b.Grow(len(s))
	prevSecret := false // the previous word was an option naming a secret
	i := 0
	for i < len(s) {
		if !isWordByte(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		w, m := maskWord(s[i:j], prevSecret)
		n += m
		b.WriteString(w)
		prevSecret = isSecretOption(s[i:j])
		i = j
	}
	return b.String(), n
}

// isWordByte is a byte of a word: anything but space, quotes and the
// shell's separators.
func isWordByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', ';', '|', '&', '(', ')', '<', '>', ',', '{', '}', '[', ']':
		return false
	}
	return true
}

// isSecretOption reports whether w is an option whose next word is a
// secret: --password, --token, -p is not (too common).
func isSecretOption(w string) bool {
	return strings.HasPrefix(w, "--") && !strings.Contains(w, "=") && secretName(w)
}

// maskWord masks one word: all of it after an option naming a secret,
// the value of NAME=VALUE when NAME names a secret, and otherwise each of
// each of its parts between slashes, colons, equals signs and the like
// that looks like a secret, or else the whole word when it does (base64
// holds slashes) and does not read as a path.
func maskWord(w string, afterSecretOption bool) (string, int) {
	if afterSecretOption && !strings.HasPrefix(w, "-") {
		return "[masked]", 1
	}
	if k, _, ok := strings.Cut(w, "="); ok && secretName(k) {
		return k + "=[masked]", 1
	}
	n := 0
	parts := splitKeep(w, "/:=@?&")
	for i, p := range parts {
		if len(p) > 1 && looksSecret(p) {
			parts[i], n = "[masked]", n+1
		}
	}
	if n > 0 {
		return strings.Join(parts, ""), n
	}
	// base64 holds slashes and equals signs: a whole word of it.
	if looksSecret(w) && !pathLike(w) {
		return "[masked]", 1
	}
	return w, 0
}

// pathLike reports whether w reads as a path rather than as base64: a
// part between slashes made of lower-case letters alone ("home", "src").
func pathLike(w string) bool {
	if strings.Contains(w, "://") || strings.ContainsAny(w[:1], "/~.") {
		return true
	}
	for _, p := range strings.Split(w, "/") {
		plain := len(p) >= 2
		for i := 0; i < len(p) && plain; i++ {
			plain = p[i] >= 'a' && p[i] <= 'z' || p[i] == '.' || p[i] == '_' || p[i] == '-'
		}
		if plain {
			return true
		}
	}
	return false
}

// splitKeep splits s before and after every byte of seps, keeping them.
func splitKeep(s, seps string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(seps, s[i]) >= 0 {
			if i > start {
				out = append(out, s[start:i])
			}
			out = append(out, s[i:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// tokenPrefixes are the known token formats, each with the fewest
// characters that follow it in a real token.
var tokenPrefixes = []struct {
	prefix string
	min    int
}{
	{"github_pat_", 20}, {"ghp_", 20}, {"gho_", 20}, {"ghu_", 20}, {"ghs_", 20}, {"ghr_", 20},
	{"sk-", 16}, {"AKIA", 16}, {"ASIA", 16},
	{"xoxb-", 10}, {"xoxa-", 10}, {"xoxp-", 10}, {"xoxr-", 10}, {"xoxs-", 10}, {"xoxe-", 10},
	{"veto_", 16}, {"glpat-", 16},
}

// looksSecret reports whether one word or part of one looks like a
// secret: a known token format anywhere in it, a JWT, or high entropy.
func looksSecret(w string) bool {
	for _, t := range tokenPrefixes {
		for off := 0; ; {
			i := strings.Index(w[off:], t.prefix)
			if i < 0 {
				break
			}
			i += off
			if (i == 0 || !isTokenByte(w[i-1])) && tokenRun(w[i+len(t.prefix):]) >= t.min {
				return true
			}
			off = i + 1
		}
	}
	if isJWT(w) {
		return true
	}
	return highEntropy(w)
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// tokenRun is how many token bytes s starts with.
func tokenRun(s string) int {
	n := 0
	for n < len(s) && isTokenByte(s[n]) {
		n++
	}
	return n
}

// isJWT reports whether w holds a JSON Web Token: eyJ…, three base64url
// parts.
func isJWT(w string) bool {
	i := strings.Index(w, "eyJ")
	if i < 0 {
		return false
	}
	parts := strings.Split(w[i:], ".")
	if len(parts) < 3 {
		return false
	}
	for _, p := range parts[:3] {
		if tokenRun(p) < 4 {
			return false
		}
	}
	return true
}

// highEntropy reports whether w is long and random enough to be a key:
// at least 20 bytes of letters, digits and base64's signs, with letters
// and digits both, and at least 3.5 bits of entropy a byte (hexadecimal:
// 32 bytes and 3 bits, its most being 4).
func highEntropy(w string) bool {
	if len(w) < 20 {
		return false
	}
	var letters, digits, hexOnly = 0, 0, true
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letters++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
			hexOnly = false
		case c == '+' || c == '/' || c == '_' || c == '-' || c == '=':
			hexOnly = false
		default:
			return false
		}
	}
	if letters == 0 || digits == 0 {
		return false
	}
	e := entropy(w)
	if hexOnly {
		return len(w) >= 32 && e >= 3
	}
	return e >= 3.5
}

// entropy is w's Shannon entropy in bits a byte.
func entropy(w string) float64 {
	var counts [256]int
	for i := 0; i < len(w); i++ {
		counts[w[i]]++
	}
	e := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(w))
			e -= p * math.Log2(p)
		}
	}
	return e
}

// maskPEM replaces every PEM private key block (BEGIN … PRIVATE KEY to
// its END line, or to the end) with "[masked: private key]".
func maskPEM(s string) (string, int) {
	n := 0
	for {
		i := strings.Index(s, "-----BEGIN ")
		if i < 0 {
			return s, n
		}
		head := s[i:]
		eol := strings.Index(head[len("-----BEGIN "):], "-----")
		if eol < 0 || !strings.Contains(head[:len("-----BEGIN ")+eol], "PRIVATE KEY") {
			// not a private key: keep it, and look after it
			rest, m := maskPEM(head[len("-----BEGIN "):])
			return s[:i] + "-----BEGIN " + rest, n + m
		}
		end := len(head)
		if j := strings.Index(head, "-----END "); j >= 0 {
			end = j + len("-----END ")
			if k := strings.Index(head[end:], "-----"); k >= 0 {
				end += k + len("-----")
			} else {
				end = len(head)
			}
		}
		s, n = s[:i]+"[masked: private key]"+head[end:], n+1
	}
}
