package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return hex.EncodeToString(mac.Sum(nil))
}

func TestHandler(t *testing.T) {
	const secret = "s3cret"
	push := `{"ref":"refs/heads/main","after":"abc"}`
	other := `{"ref":"refs/heads/regatta/status"}`
	tests := []struct {
		name    string
		method  string
		body    string
		headers map[string]string
		code    int
		trigger bool
	}{
		{"github good", "POST", push, map[string]string{"X-Hub-Signature-256": "sha256=" + sign(secret, push)}, 202, true},
		{"github bad", "POST", push, map[string]string{"X-Hub-Signature-256": "sha256=" + sign("wrong", push)}, 401, false},
		{"github tampered body", "POST", push + " ", map[string]string{"X-Hub-Signature-256": "sha256=" + sign(secret, push)}, 401, false},
		{"github not hex", "POST", push, map[string]string{"X-Hub-Signature-256": "sha256=zz"}, 401, false},
		{"gitea good", "POST", push, map[string]string{"X-Gitea-Signature": sign(secret, push)}, 202, true},
		{"gitlab good", "POST", push, map[string]string{"X-Gitlab-Token": secret}, 202, true},
		{"gitlab bad", "POST", push, map[string]string{"X-Gitlab-Token": "nope"}, 401, false},
		{"unsigned", "POST", push, nil, 401, false},
		{"other branch", "POST", other, map[string]string{"X-Gitlab-Token": secret}, 202, false},
		{"ping without ref", "POST", `{"zen":"hi"}`, map[string]string{"X-Hub-Signature-256": "sha256=" + sign(secret, `{"zen":"hi"}`)}, 202, true},
		{"GET", "GET", "", nil, 405, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var triggered bool
			h := &Handler{Secret: []byte(secret), Branch: "main", Trigger: func(string) { triggered = true }}
			req := httptest.NewRequest(tt.method, "/hooks/push", strings.NewReader(tt.body))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.code || triggered != tt.trigger {
				t.Errorf("code %d triggered %v, want %d %v", rec.Code, triggered, tt.code, tt.trigger)
			}
		})
	}
}

func TestHandlerWithoutSecretRefusesAll(t *testing.T) {
	h := &Handler{Trigger: func(string) { t.Error("triggered without a secret") }}
	req := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
	req.Header.Set("X-Gitlab-Token", "")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("code %d", rec.Code)
	}
}

func TestHandlerBodyLimit(t *testing.T) {
	h := &Handler{Secret: []byte("x"), Trigger: func(string) {}}
	req := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("a", MaxBody+10)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("code %d", rec.Code)
	}
}
