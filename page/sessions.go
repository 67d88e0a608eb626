package page

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

const (
	uiCookie     = "veto_ui"
	uiSessionFor = 12 * time.Hour
	// maxSessions bounds the page's session table: a sign-in past it,
	// once the expired sessions are swept, is refused (503).
	maxSessions = 1024
	// maxSessionsPerActor bounds one actor's sessions: a sign-in past
	// it ends that actor's oldest, so that one person's browsers (or one
	// token's script) cannot fill the table.
	maxSessionsPerActor = 16
	// maxKeys bounds the one-time keys not yet used: past it the oldest
	// is dropped.
	maxKeys = 16
	// sweepEvery is how often a use of the table drops the expired
	// sessions, beside each sign-in.
	sweepEvery = time.Minute
	// watchEvery is how often a live stream asks whether its session
	// still stands (its token still live): a revoked token's stream ends
	// within it and the token cache's second.
	watchEvery = time.Second
)

// uiSessions are the page's sessions and the one-time keys not yet used.
// Both are bounded; the sessions are swept at each sign-in and at most a
// minute apart on use.
type uiSessions struct {
	mu       sync.Mutex
	sessions map[string]*uiSession // by cookie value
	keys     map[string]time.Time  // one-time key → when it was made
	swept    time.Time
}

// uiSession is one browser's: who it is (the token's actor, or veto ui's
// user), the token its forms carry against cross-site requests and, for
// a session opened with a token, that token's secret (held in memory
// only), which every use verifies again, so that a revoked token's
// sessions end with it.
type uiSession struct {
	id      string
	opened  time.Time
	expires time.Time
	actor   veto.Actor
	csrf    string
	token   string
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// OneTimeKey makes a key that opens one session of the page, once. At
// most maxKeys wait for their use: a key made past that drops the oldest.
func (pg *Page) OneTimeKey() string {
	k := randomHex(24)
	pg.ui.mu.Lock()
	defer pg.ui.mu.Unlock()
	if pg.ui.keys == nil {
		pg.ui.keys = map[string]time.Time{}
	}
	for len(pg.ui.keys) >= maxKeys {
		oldest, first := "", time.Time{}
		for key, made := range pg.ui.keys {
			if oldest == "" || made.Before(first) {
				oldest, first = key, made
			}
		}
		delete(pg.ui.keys, oldest)
	}
	pg.ui.keys[k] = time.Now()
	return k
}

func (u *uiSessions) takeKey(k string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for key := range u.keys {
		if subtle.ConstantTimeCompare([]byte(key), []byte(k)) == 1 {
			delete(u.keys, key)
			return true
		}
	}
	return false
}

// open starts a session for actor (token: the secret it signed in with,
// "" for a one-time key's) and returns its cookie value; "" when the
// table is full.
func (u *uiSessions) open(now time.Time, actor veto.Actor, token string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sessions == nil {
		u.sessions = map[string]*uiSession{}
	}
	u.sweep(now)
	var mine []*uiSession
	for _, se := range u.sessions {
		if se.actor == actor {
			mine = append(mine, se)
		}
	}
	for len(mine) >= maxSessionsPerActor {
		oldest := 0
		for i, se := range mine {
			if se.opened.Before(mine[oldest].opened) {
				oldest = i
			}
		}
		delete(u.sessions, mine[oldest].id)
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
	if len(u.sessions) >= maxSessions {
		return ""
	}
	id := randomHex(32)
	u.sessions[id] = &uiSession{id: id, opened: now, expires: now.Add(uiSessionFor), actor: actor, csrf: randomHex(16), token: token}
	return id
}

// sweep drops the expired sessions; the caller holds the lock.
func (u *uiSessions) sweep(now time.Time) {
	for id, se := range u.sessions {
		if !now.Before(se.expires) {
			delete(u.sessions, id)
		}
	}
	u.swept = now
}

func (u *uiSessions) get(id string, now time.Time) (uiSession, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if now.Sub(u.swept) >= sweepEvery || now.Before(u.swept) {
		u.sweep(now)
	}
	se, ok := u.sessions[id]
	if !ok || !now.Before(se.expires) {
		return uiSession{}, false
	}
	return *se, true
}

// end ends session id.
func (u *uiSessions) end(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.sessions, id)
}

// size is how many sessions the table holds.
func (u *uiSessions) size() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.sessions)
}

type sessionKey struct{}

func sessionOf(r *http.Request) uiSession {
	se, _ := r.Context().Value(sessionKey{}).(uiSession)
	return se
}

// standing is what stands of a session now.
type standing int

const (
	sessionLive    standing = iota
	sessionEnded            // no such session, expired, or its token revoked
	sessionUnknown          // the state cannot say whether its token is live
)

// session returns the session of cookie value id, if it stands: not
// expired and, when opened with a token, that token still live, a
// person's and the same actor's. A session whose token is no longer so is
// ended.
func (pg *Page) session(ctx context.Context, id string) (uiSession, standing) {
	se, ok := pg.ui.get(id, pg.cfg.Now())
	if !ok {
		return uiSession{}, sessionEnded
	}
	if se.token == "" {
		return se, sessionLive
	}
	if pg.cfg.Tokens == nil {
		pg.ui.end(id)
		return uiSession{}, sessionEnded
	}
	ctx, cancel := context.WithTimeout(ctx, pg.cfg.Deadline)
	defer cancel()
	release, err := pg.acquire(ctx)
	if err != nil {
		return uiSession{}, sessionUnknown
	}
	tok, ok, err := pg.cfg.Tokens.Verify(ctx, se.token)
	release()
	switch {
	case err != nil:
		return uiSession{}, sessionUnknown
	case !ok || tok.Role != server.RolePerson || tok.Actor != se.actor:
		pg.ui.end(id)
		return uiSession{}, sessionEnded
	}
	return se, sessionLive
}

// watch cancels the request's context (a live stream's) when its session
// ends: expired, or its token revoked. A state that cannot say ends it
// too: the stream is opened again, and a sign-in asked for if need be.
func (pg *Page) watch(r *http.Request) (*http.Request, func()) {
	ctx, cancel := context.WithCancel(r.Context())
	id := sessionOf(r).id
	go func() {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, st := pg.session(ctx, id); st != sessionLive {
					cancel()
					return
				}
			}
		}
	}()
	return r.WithContext(ctx), cancel
}

// signInFailed answers a sign-in that opens no session: status, and the
// sign-in form (never the key or token tried).
func signInFailed(w http.ResponseWriter, status int, reason, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if reason != "" {
		w.Header().Set(server.ReasonHeader, reason)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(60))
	}
	w.WriteHeader(status)
	uiTemplates().ExecuteTemplate(w, "login.html", map[string]string{"Error": msg})
}

// uiLogin is GET /ui/login: with ?k=, a one-time key of veto ui opens a
// session; without, the sign-in form. A token is never taken from the
// address (it would stay in the browser's history, a proxy's log and a
// Referer): a token given there is refused and the form shown.
func (pg *Page) uiLogin(w http.ResponseWriter, r *http.Request) {
	k := r.URL.Query().Get("k")
	switch {
	case k == "":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		uiTemplates().ExecuteTemplate(w, "login.html", nil)
	case pg.ui.takeKey(k):
		pg.signIn(w, r, pg.actor, "")
	case strings.HasPrefix(k, "veto_"):
		signInFailed(w, http.StatusUnauthorized, "", "A token is not taken in the address: it stays in the browser's history. Sign in with the form below.")
	default:
		signInFailed(w, http.StatusUnauthorized, "", "That key is not valid, or was used already.")
	}
}

// uiLoginPost is POST /ui/login: a person's token, in the form's body,
// opens a session that follows the token (it ends when the token is
// revoked). Any other token is refused 403, person_required.
func (pg *Page) uiLoginPost(w http.ResponseWriter, r *http.Request) {
	if !fromPage(r) {
		signInFailed(w, http.StatusForbidden, "", "The sign-in did not come from veto's page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		signInFailed(w, http.StatusBadRequest, "", "The sign-in form is not readable.")
		return
	}
	secret := r.PostFormValue("token")
	if secret == "" || pg.cfg.Tokens == nil {
		signInFailed(w, http.StatusUnauthorized, "", "That token is not valid, or was revoked.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pg.cfg.Deadline)
	defer cancel()
	release, err := pg.acquire(ctx)
	if err != nil {
		signInFailed(w, http.StatusServiceUnavailable, "", "veto cannot read its state: "+pg.cfg.Cause(err)+".")
		return
	}
	tok, ok, err := pg.cfg.Tokens.Verify(ctx, secret)
	release()
	switch {
	case err != nil:
		signInFailed(w, http.StatusServiceUnavailable, "", "veto cannot read its tokens; try again.")
	case !ok:
		signInFailed(w, http.StatusUnauthorized, "", "That token is not valid, or was revoked.")
	case tok.Role != server.RolePerson:
		// Only a person signs in: a session answers questions and gives
		// input.
		signInFailed(w, http.StatusForbidden, server.ReasonPersonRequired, "Only a person's token (a user: actor) signs in to the page.")
	default:
		pg.signIn(w, r, tok.Actor, secret)
	}
}

// signIn opens a session for actor and sends the browser on to /ui.
func (pg *Page) signIn(w http.ResponseWriter, r *http.Request, actor veto.Actor, token string) {
	id := pg.ui.open(pg.cfg.Now(), actor, token)
	if id == "" {
		signInFailed(w, http.StatusServiceUnavailable, "", "The page has as many sessions open as it keeps; try again later.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: id, Path: "/ui", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(uiSessionFor.Seconds())})
	http.Redirect(w, r, "/ui", http.StatusSeeOther)
}
