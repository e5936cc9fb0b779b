package access

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MinCookieKey is the shortest cookie key accepted, in bytes.
const MinCookieKey = 32

// signer signs and checks cookie values: base64url(JSON) "."
// base64url(HMAC-SHA256(key, purpose NUL JSON)). The purpose keeps a
// login cookie from passing as a session.
type signer struct {
	key []byte
	now func() time.Time
}

// newSigner takes key, or generates one when it is nil.
func newSigner(key []byte) (*signer, error) {
	if key == nil {
		key = make([]byte, MinCookieKey)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	if len(key) < MinCookieKey {
		return nil, fmt.Errorf("the cookie key (--ui-cookie-key-file) has %d bytes, want at least %d: e.g. head -c 32 /dev/urandom | base64", len(key), MinCookieKey)
	}
	return &signer{key: key, now: time.Now}, nil
}

// expiring is a signed payload with an expiry (Unix seconds).
type expiring interface{ expiry() int64 }

func (s *signer) mac(purpose string, payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)
}

// sign encodes v for purpose.
func (s *signer) sign(purpose string, v any) (string, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(purpose, payload)), nil
}

var errBadCookie = errors.New("cookie not signed by this regatta, or expired")

// open checks value's signature for purpose and its expiry, and decodes
// it into v.
func (s *signer) open(purpose, value string, v expiring) error {
	enc := base64.RawURLEncoding
	p64, m64, ok := strings.Cut(value, ".")
	if !ok {
		return errBadCookie
	}
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, payload)) {
		return errBadCookie
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return errBadCookie
	}
	if s.now().Unix() >= v.expiry() {
		return errBadCookie
	}
	return nil
}
