package server

import (
	"mime"
	"net/http"
	"net/netip"
	"strings"
)

// Without tokens (veto serve --insecure-no-auth) a request is trusted for
// where it comes from: the loopback interface. A browser on the same
// machine reaches loopback too, for any web page it shows, so a request
// is also refused when it could be one a page made: one whose Host is not
// a loopback name (DNS rebinding: attacker.example resolved to 127.0.0.1
// reads the log as same-origin), one from another origin (Origin,
// Sec-Fetch-Site), and a body that is not application/json (a cross-site
// form or text/plain post needs no CORS preflight; a JSON one does, and
// this service answers none).

// The reasons of a request refused without tokens.
const (
	// ReasonHostRefused: the request's Host is not a loopback name.
	ReasonHostRefused = "host_refused"
	// ReasonOriginRefused: a browser sent the request from another origin.
	ReasonOriginRefused = "origin_refused"
	// ReasonContentTypeRefused: a body that is not application/json.
	ReasonContentTypeRefused = "content_type_refused"
)

// maxHostLen bounds the Host and Origin a check reads: longer is refused.
const maxHostLen = 255

// LocalOnly serves next only to requests whose Host is a loopback name
// and that no other origin sent (localRefusal): what veto serve puts in
// front of the page too when it listens without tokens, so that a page
// on another site reaches neither the API nor the page.
func LocalOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, reason, msg := localRefusal(r); reason != "" {
			writeError(w, status, reason, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// localRefusal is why a request without a token is refused: its status,
// reason and sentence (which quotes none of the request), or reason ""
// when it may be served.
func localRefusal(r *http.Request) (status int, reason, msg string) {
	if !loopbackHost(r.Host) {
		return http.StatusForbidden, ReasonHostRefused,
			"Without tokens veto serve answers only requests addressed to a loopback name (localhost, 127.0.0.1, [::1]), so the request is refused."
	}
	if !sameOrigin(r) {
		return http.StatusForbidden, ReasonOriginRefused,
			"Without tokens veto serve answers no request another origin sent (Origin, Sec-Fetch-Site), so the request is refused."
	}
	return 0, "", ""
}

// bodyRefusal is why a request's body is refused without tokens: every
// method but GET and HEAD must say its body is application/json.
func bodyRefusal(r *http.Request) (status int, reason, msg string) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || isJSON(r.Header.Values("Content-Type")) {
		return 0, "", ""
	}
	return http.StatusUnsupportedMediaType, ReasonContentTypeRefused,
		"Without tokens veto serve takes a body only as Content-Type: application/json, so the request is refused."
}

// isJSON reports whether a request's Content-Type values say
// application/json: exactly one value, its parameters (charset) aside.
func isJSON(values []string) bool {
	if len(values) != 1 || len(values[0]) > maxHostLen {
		return false
	}
	mt, _, err := mime.ParseMediaType(values[0])
	return err == nil && mt == "application/json"
}

// loopbackHost reports whether host (a Host header: a name or an address,
// with or without a port) names the loopback interface: localhost, an
// IPv4 address in 127.0.0.0/8 or ::1 in brackets. Nothing else is taken,
// no other name (a DNS answer is the attacker's to choose), no trailing
// dot, no short or numeric IPv4 form.
func loopbackHost(host string) bool {
	name, ok := splitHost(host)
	if !ok {
		return false
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if strings.HasPrefix(name, "[") {
		a, err := netip.ParseAddr(name[1 : len(name)-1])
		return err == nil && a == netip.IPv6Loopback()
	}
	a, err := netip.ParseAddr(name)
	return err == nil && a.Is4() && a.IsLoopback()
}

// splitHost is host without its port: "[::1]" keeps its brackets. A port
// must be digits (at most five); a name without brackets holds no colon.
func splitHost(host string) (string, bool) {
	if host == "" || len(host) > maxHostLen {
		return "", false
	}
	name, port := host, ""
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", false
		}
		name, port = host[:end+1], host[end+1:]
		if port != "" {
			p, ok := strings.CutPrefix(port, ":")
			if !ok {
				return "", false
			}
			port = p
			if port == "" {
				return "", false
			}
		}
	} else if i := strings.IndexByte(host, ':'); i >= 0 {
		name, port = host[:i], host[i+1:]
		if port == "" {
			return "", false
		}
	}
	if len(port) > 5 || strings.Trim(port, "0123456789") != "" || name == "" || name == "[]" {
		return "", false
	}
	return name, true
}

// sameOrigin reports whether no other origin sent r: no Origin header, or
// exactly one naming this request's own scheme and Host; and no
// Sec-Fetch-Site but same-origin or none (a person typing the address).
// An Origin of "null" (a sandboxed frame, a file, a redirect) is another
// origin.
func sameOrigin(r *http.Request) bool {
	switch site := r.Header.Values("Sec-Fetch-Site"); {
	case len(site) > 1:
		return false
	case len(site) == 1 && site[0] != "same-origin" && site[0] != "none":
		return false
	}
	origins, ok := r.Header["Origin"]
	if !ok {
		return true
	}
	if len(origins) != 1 || len(origins[0]) > maxHostLen {
		return false
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	rest, ok := strings.CutPrefix(strings.ToLower(origins[0]), scheme)
	return ok && rest == strings.ToLower(r.Host) && loopbackHost(rest)
}
