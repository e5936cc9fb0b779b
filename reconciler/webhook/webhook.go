// Package webhook receives push notifications from Git hosts so a pass
// starts right away instead of at the next poll. GitHub (and Gitea)
// requests are verified by their HMAC-SHA256 signature, GitLab requests by
// their secret token; anything else is refused.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// MaxBody is the largest request body read; push payloads are far smaller.
const MaxBody = 5 << 20

// Handler verifies push webhooks and calls Trigger for pushes to Branch.
type Handler struct {
	// Secret is the shared secret configured on the Git host. Required.
	Secret []byte
	// Branch is the followed branch; pushes to other branches (such as the
	// status branch) are acknowledged and ignored. Empty accepts any.
	Branch string
	// Trigger asks for an immediate fetch; it must not block.
	Trigger func(reason string)
	Log     *slog.Logger
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil || len(body) > MaxBody {
		http.Error(w, "body unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	source, ok := h.verify(r.Header, body)
	if !ok {
		h.log().Warn("webhook refused: bad or missing signature", "remote", r.RemoteAddr)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	ref := pushRef(body)
	if h.Branch != "" && ref != "" && ref != "refs/heads/"+h.Branch {
		h.log().Debug("webhook ignored: push to another branch", "source", source, "ref", ref)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.log().Info("webhook: push received, fetching", "source", source, "ref", ref)
	h.Trigger("webhook " + source)
	w.WriteHeader(http.StatusAccepted)
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

// verify checks the request's signature or token and names its source.
func (h *Handler) verify(hdr http.Header, body []byte) (string, bool) {
	if len(h.Secret) == 0 {
		return "", false
	}
	if sig := hdr.Get("X-Hub-Signature-256"); sig != "" {
		return "github", validHMAC(h.Secret, body, strings.TrimPrefix(sig, "sha256="))
	}
	if sig := hdr.Get("X-Gitea-Signature"); sig != "" {
		return "gitea", validHMAC(h.Secret, body, sig)
	}
	if tok := hdr.Get("X-Gitlab-Token"); tok != "" {
		return "gitlab", subtle.ConstantTimeCompare([]byte(tok), h.Secret) == 1
	}
	return "", false
}

func validHMAC(secret, body []byte, hexSig string) bool {
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// pushRef returns the "ref" of a push payload (GitHub, GitLab and Gitea all
// send one), or "" when there is none (a ping, for example).
func pushRef(body []byte) string {
	var p struct {
		Ref string `json:"ref"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Ref
}
