package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/presence/presencetest"
)

// lines is a writer a test reads while a command still writes to it.
type lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// wait returns the first match of re in what was written, within 20 s.
func (l *lines) wait(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		l.mu.Lock()
		m := re.FindStringSubmatch(l.b.String())
		l.mu.Unlock()
		if m != nil {
			return m[1]
		}
	}
	t.Fatalf("nothing matched %s", re)
	return ""
}

// runVeto runs veto with args in this process, in a home of its own,
// until the test ends.
func runVeto(t *testing.T, args ...string) (stdout, stderr *lines) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".state"))
	t.Setenv("VETO_STATE", "")
	t.Setenv("VETO_POSTGRES", "")
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &lines{}, &lines{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cli.Main(ctx, append(args, "--state", filepath.Join(home, "veto.db")), strings.NewReader(""), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("veto did not stop")
		}
	})
	return stdout, stderr
}

// fetch sends method to url with hc and returns the status, the content
// type and the body.
func fetch(t *testing.T, hc *http.Client, method, url string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestServeAndUIMountThePageBesideTheAPI: veto serve and veto ui serve the
// page and the API on one listener, as before the page was a package of
// its own: the page's routes (a session needed, its script and style
// without), the API's, the API's JSON not_found on any other path, and
// the mux's 405 for a page's path with another method; veto ui's one-time
// key opens a session, and it serves no API but /healthz.
func TestServeAndUIMountThePageBesideTheAPI(t *testing.T) {
	type want struct {
		method, path string
		status       int
		ctype, body  string
	}
	cases := []struct {
		name  string
		args  []string
		wants []want
	}{
		{"serve", []string{"serve", "--listen", "127.0.0.1:0"}, []want{
			{"GET", "/ui", 401, "text/html", "login"},
			{"GET", "/ui/runs/r1", 401, "text/html", "login"},
			{"GET", "/ui/style.css", 200, "text/css", ""},
			{"POST", "/ui", 404, "application/json", "not_found"},
			{"GET", "/ui/nosuch/x/y", 404, "application/json", "not_found"},
			{"GET", "/healthz", 200, "", ""},
			{"GET", "/v1/approvals", 401, "application/json", "unauthenticated"},
			{"GET", "/nosuch", 404, "application/json", "not_found"},
		}},
		{"ui", []string{"ui", "--listen", "127.0.0.1:0"}, []want{
			{"GET", "/ui", 200, "text/html", `id="decisions"`},
			{"GET", "/ui/whatif", 200, "text/html", "transcript"},
			{"GET", "/healthz", 200, "", ""},
			{"POST", "/v1/decide", 404, "application/json", "not_found"},
			{"GET", "/v1/approvals", 404, "application/json", "not_found"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			hc := &http.Client{Jar: jar, Timeout: 10 * time.Second}
			var base string
			if c.name == "serve" {
				_, stderr := runVeto(t, c.args...)
				base = "http://" + stderr.wait(t, regexp.MustCompile(`listening on http://(\S+)`))
			} else {
				// veto ui shows its key only on a person's terminal: one the test holds.
				cmd := uiCmd(t)
				term, err := presencetest.Start(cmd)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { term.Close() })
				m, err := term.Expect(regexp.MustCompile(`open (http://\S+/ui/login\?k=[A-Za-z0-9_-]+)`), 20*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				login := m[1]
				base = strings.TrimSuffix(login[:strings.Index(login, "/ui/login")], "/")
				if code, _, body := fetch(t, hc, "GET", login); code != 200 || !strings.Contains(body, `id="decisions"`) {
					t.Fatalf("the one-time key: %d\n%s", code, body)
				}
				if code, _, _ := fetch(t, &http.Client{Timeout: 10 * time.Second}, "GET", login); code != 401 {
					t.Fatalf("the one-time key opened a second session: %d", code)
				}
			}
			for _, w := range c.wants {
				code, ctype, body := fetch(t, hc, w.method, base+w.path)
				if code != w.status || !strings.HasPrefix(ctype, w.ctype) || !strings.Contains(body, w.body) {
					t.Errorf("%s %s: %d %q, want %d %q with %q\n%s", w.method, w.path, code, ctype, w.status, w.ctype, w.body, body)
				}
			}
		})
	}
}
