// Package browsertest starts Debian's headless Chromium for the tests that
// drive veto's page: the server's and the end-to-end suite's.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium finds Debian's Chromium ($VETO_CHROMIUM first). Without it
// the test skips, and fails when CI is set (.ci/run installs it).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("VETO_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" || os.Getenv("VETO_E2E") == "1" {
		t.Fatal("the page's tests need Chromium (apt-get install chromium)")
	}
	t.Skip("no Chromium: apt-get install chromium")
	return ""
}

// New is a headless Chromium (the binary bin) for one test: a profile of
// its own, no background traffic (updates, sync, first-run fetches), no
// proxy, and a bound of limit. It ends with the test.
func New(t testing.TB, bin string, limit time.Duration) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("headless", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.NoFirstRun,
		chromedp.Flag("no-proxy-server", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, limit)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	return ctx
}
