package repo

import (
	"errors"
	"net"
	"strings"
)

// isNetError reports a network failure: refused, reset, unreachable, DNS,
// timeouts, or an HTTP 5xx from go-git.
func isNetError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "no such host", "EOF", "status code: 5"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
