package page

import (
	"net/http"
	"net/url"
	"strings"
)

// pathTo is the page's address prefix/ids…, each id one path segment,
// escaped, so that no id (a call id "../../approvals/OTHER-RUN/OTHER-CALL",
// its "%2e%2e" spelling, a "?" or "#") can name another address than its
// own. An id that cannot be one segment gives "": empty, "." or ".."
// (which a browser removes whatever their spelling, and Go's mux
// redirects) or "/" alone (which Go's mux reads as a trailing slash, its
// escaping notwithstanding). The page then draws no form or link for it.
func pathTo(prefix string, ids ...string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, id := range ids {
		if !segmentable(id) {
			return ""
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(id))
	}
	return b.String()
}

// segmentable reports whether id can be one segment of an address, read
// back as itself by the page's routes.
func segmentable(id string) bool {
	return id != "" && id != "." && id != ".." && id != "/"
}

// formNamesItsAddress reports whether a form posted to r names the
// address it was posted to: each of names (the route's path values) that
// the form gives is given once and is the path's. The page's forms name
// their run and call (server and tool) beside their action, so that an
// address the browser resolved otherwise than the page drew it answers
// nothing.
func formNamesItsAddress(r *http.Request, names ...string) bool {
	for _, n := range names {
		if vs, ok := r.PostForm[n]; ok && (len(vs) != 1 || vs[0] != r.PathValue(n)) {
			return false
		}
	}
	return true
}
