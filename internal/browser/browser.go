package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Environment variables of the package.
const (
	// EnvChromium names the chromium binary; else chromium on PATH.
	EnvChromium = "REGATTA_CHROMIUM"
	// EnvArtifacts is the folder screenshots go to.
	EnvArtifacts = "REGATTA_ARTIFACTS"
)

// Viewport is the window size of a Browser: a laptop's screen, which
// keeps screenshots small.
const (
	ViewportWidth  = 1280
	ViewportHeight = 800
)

// DefaultTimeout bounds one action of a Page (a navigation, a wait for a
// selector) unless the test says otherwise.
const DefaultTimeout = 30 * time.Second

// Browser is one headless chromium process.
type Browser struct {
	t         testing.TB
	ctx       context.Context // the browser's chromedp context (its first tab)
	artifacts string
}

// Binary finds the chromium binary: EnvChromium, else chromium (or
// chromium-browser) on PATH.
func Binary() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvChromium, p, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH and " + EnvChromium + " unset: run hack/setup-test-env.sh (installs Debian's chromium) or set " + EnvChromium)
}

// flags are chromium's switches for this machine: headless, no sandbox
// (tests may run as root), no GPU, and nothing that talks to the network
// on its own (updates, sync, QUIC probes).
func flags(bin, dataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(dataDir),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(ViewportWidth, ViewportHeight),
	}
}

// Start starts chromium for the test and stops it when the test ends. It
// skips the test when no chromium is found, or fails it in CI.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so the browser tests must run: %v", err)
		}
		t.Skip(err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags(bin, t.TempDir())...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc() // waits for the process to end
	})
	// The first Run starts the process; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	b := &Browser{t: t, ctx: ctx, artifacts: artifactsDir(t)}
	t.Logf("chromium %s started; screenshots go to %s", bin, b.artifacts)
	return b
}

// artifactsDir is EnvArtifacts, created when missing, else a folder
// under the test's temporary folder.
func artifactsDir(t testing.TB) string {
	dir := os.Getenv(EnvArtifacts)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("%s=%s: %v", EnvArtifacts, dir, err)
	}
	return dir
}

// Artifacts is the folder screenshots go to.
func (b *Browser) Artifacts() string { return b.artifacts }
