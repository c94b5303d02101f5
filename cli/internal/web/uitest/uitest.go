// Package uitest runs check.mjs, which drives the web dashboard in
// headless Chromium, for the browser tests of the dashboard: of a job
// weir run serves (cli/internal/web) and of a cluster's coordinator
// (cli). It needs Chromium (/usr/bin/chromium, or $CHROMIUM), node, and
// the npm packages of this directory (npm ci --prefix
// cli/internal/web/uitest).
package uitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// dir is this package's directory, where check.mjs and its node_modules
// are.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Missing returns what is missing to run the browser test, in words
// that say how to install it.
func Missing() []string {
	var missing []string
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, "Chromium at "+chromium+" (Debian/Ubuntu: apt-get install -y chromium; or set CHROMIUM to a Chromium binary)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node in PATH (Node.js 18 or newer)")
	}
	if _, err := os.Stat(filepath.Join(dir(), "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (run: npm ci --prefix cli/internal/web/uitest)")
	}
	return missing
}

// HangGuard is how long check.mjs may take in all before it gives up:
// five minutes, far more than a loaded machine needs, or less if go
// test's -timeout would end the test first, so that the test fails with
// check.mjs's account of what it waited for rather than go test's panic
// (it leaves Check's minute and another to spare).
func HangGuard(t testing.TB) time.Duration {
	guard := 5 * time.Minute
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dl.Deadline(); ok {
			if left := time.Until(d) - 2*time.Minute; left < guard {
				guard = max(left, time.Second)
			}
		}
	}
	return guard
}

// Check runs check.mjs with args (URL TASKS RECOVERIES SCREENSHOT, see
// check.mjs) and the hang guard and returns its output. check.mjs stops
// itself at the guard; if it has not exited a minute later, Check kills
// it and says so (its Chromium, which reads its commands from a pipe of
// node's, exits when that pipe closes).
func Check(guard time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir(), "check.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), "CHECK_TIMEOUT_MS="+strconv.FormatInt(guard.Milliseconds(), 10))
	cmd.WaitDelay = 10 * time.Second // once killed, for its output pipes
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("check.mjs did not stop by its own hang guard of %v and was killed a minute later: %w", guard, err)
	}
	return out, err
}
