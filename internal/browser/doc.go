// Package browser drives Debian's chromium, headless, from tests: the web
// UI's browser tests and its page benchmark. A Browser is one chromium
// process with a fresh profile (a temporary user data folder); a Page is
// one tab, which keeps what the page wrote to its console.
//
// The binary is REGATTA_CHROMIUM, else chromium on PATH
// (hack/setup-test-env.sh installs Debian's package). Without one a test
// is skipped, except in CI (CI set), where it fails: CI must run the
// browser tests. Screenshots go to REGATTA_ARTIFACTS (default: a folder
// under the test's temporary folder), and their paths are logged.
package browser
