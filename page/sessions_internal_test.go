package page

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// TestSessionTableIsBounded: one actor holds at most maxSessionsPerActor
// sessions (a sign-in past that ends its oldest); the table holds at most
// maxSessions (a sign-in past that is refused); the one-time keys waiting
// are at most maxKeys.
func TestSessionTableIsBounded(t *testing.T) {
	var u uiSessions
	now := time.Unix(1_800_000_000, 0)
	ann := veto.Actor{Kind: "user", ID: "ann"}
	var ids []string
	for i := range maxSessionsPerActor + 5 {
		id := u.open(now.Add(time.Duration(i)*time.Millisecond), ann, "")
		if id == "" {
			t.Fatalf("sign-in %d refused", i)
		}
		ids = append(ids, id)
	}
	if n := u.size(); n != maxSessionsPerActor {
		t.Fatalf("one actor holds %d sessions, want %d", n, maxSessionsPerActor)
	}
	for i, id := range ids {
		_, ok := u.get(id, now.Add(time.Second))
		if want := i >= 5; ok != want {
			t.Fatalf("session %d stands: %v, want %v (the oldest end first)", i, ok, want)
		}
	}
	for i := 0; u.size() < maxSessions; i++ {
		if u.open(now, veto.Actor{Kind: "user", ID: fmt.Sprint("p", i)}, "") == "" {
			t.Fatalf("refused at %d sessions", u.size())
		}
	}
	if id := u.open(now, veto.Actor{Kind: "user", ID: "one-more"}, ""); id != "" {
		t.Fatalf("a sign-in past %d sessions opened one", maxSessions)
	}

	pg := &Page{}
	var keys []string
	for range maxKeys + 3 {
		keys = append(keys, pg.OneTimeKey())
		time.Sleep(time.Millisecond)
	}
	if n := len(pg.ui.keys); n != maxKeys {
		t.Fatalf("%d one-time keys wait, want %d", n, maxKeys)
	}
	if pg.ui.takeKey(keys[0]) || !pg.ui.takeKey(keys[len(keys)-1]) {
		t.Fatal("the oldest key is not the one dropped")
	}
}

// TestSessionTableIsSwept: expired sessions leave the table at the next
// sign-in, and at the first use a minute after the last sweep, not only
// when their own cookie comes back.
func TestSessionTableIsSwept(t *testing.T) {
	var u uiSessions
	now := time.Unix(1_800_000_000, 0)
	for i := range 10 {
		u.open(now, veto.Actor{Kind: "user", ID: fmt.Sprint("p", i)}, "")
	}
	later := now.Add(uiSessionFor + time.Second)
	fresh := u.open(later, veto.Actor{Kind: "user", ID: "ann"}, "")
	if n := u.size(); n != 1 {
		t.Fatalf("a sign-in after the others expired leaves %d sessions", n)
	}
	for i := range 5 {
		u.open(later, veto.Actor{Kind: "user", ID: fmt.Sprint("q", i)}, "")
	}
	u.get(fresh, later.Add(uiSessionFor-time.Minute)) // within the minute of the sweep: fresh stands, the rest too
	if n := u.size(); n != 6 {
		t.Fatalf("%d sessions before they expire, want 6", n)
	}
	if _, ok := u.get("no-such-session", later.Add(uiSessionFor+time.Minute)); ok {
		t.Fatal("an unknown cookie opened a session")
	}
	if n := u.size(); n != 0 {
		t.Fatalf("a use after they all expired leaves %d sessions", n)
	}
}

// TestPathToEscapesEveryID: each id is one segment of the address, read
// back by the mux as itself; an id that cannot be one gives no address.
func TestPathToEscapesEveryID(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"c1", "/ui/approvals/r/c1"},
		{"../../approvals/B/c", "/ui/approvals/r/..%2F..%2Fapprovals%2FB%2Fc"},
		{"%2e%2e", "/ui/approvals/r/%252e%252e"},
		{"a?b#c", "/ui/approvals/r/a%3Fb%23c"},
		{"a;b c", "/ui/approvals/r/a%3Bb%20c"},
		{"...", "/ui/approvals/r/..."},
		{"..", ""},
		{".", ""},
		{"", ""},
		{"/", ""},
		{"//", "/ui/approvals/r/%2F%2F"},
	} {
		if got := pathTo("/ui/approvals", "r", c.in); got != c.want {
			t.Errorf("pathTo(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := pathTo("/ui/runs", strings.Repeat("/", 3)); got != "/ui/runs/%2F%2F%2F" {
		t.Errorf("slashes: %q", got)
	}
}
