package token

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// fetcher hands out numbered tokens of a fixed lifetime, or fails.
type fetcher struct {
	now      *time.Time
	lifetime time.Duration
	fail     bool
	fetched  int
	forgot   int
}

func (f *fetcher) Fetch(context.Context, *oauth2.Token) (*oauth2.Token, error) {
	if f.fail {
		return nil, errors.New("refused")
	}
	f.fetched++
	return &oauth2.Token{AccessToken: string(rune('a' + f.fetched - 1)), Expiry: f.now.Add(f.lifetime)}, nil
}

func (f *fetcher) Forget() { f.forgot++ }

func TestRenewAt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		life, want time.Duration
	}{
		{time.Hour, 55 * time.Minute},                       // 5 minutes before
		{14 * time.Minute, 10*time.Minute + 30*time.Second}, // a quarter before
		{8 * time.Second, 6 * time.Second},
	} {
		if got := RenewAt(t0, t0.Add(tc.life)).Sub(t0); got != tc.want {
			t.Errorf("lifetime %s: renewed after %s, want %s", tc.life, got, tc.want)
		}
	}
}

// A token is reused until its renewal time, then replaced; a failed
// renewal keeps a token that is still valid and fails once it expired; a
// 401 drops the token and the fetcher's cached identity.
func TestSourceRenewal(t *testing.T) {
	now := time.Unix(1000, 0)
	f := &fetcher{now: &now, lifetime: time.Hour}
	s := NewSource(context.Background(), f, nil)
	s.now = func() time.Time { return now }
	tok := func() string {
		t.Helper()
		tk, err := s.Token()
		if err != nil {
			t.Fatal(err)
		}
		return tk.AccessToken
	}
	if tok() != "a" || tok() != "a" {
		t.Fatal("first token not reused")
	}
	now = now.Add(54 * time.Minute)
	if tok() != "a" {
		t.Fatal("renewed too early")
	}
	now = now.Add(time.Minute)
	if tok() != "b" {
		t.Fatal("not renewed 5 minutes before expiry")
	}
	now = now.Add(56 * time.Minute)
	f.fail = true
	if tok() != "b" {
		t.Fatal("a failed renewal dropped a valid token")
	}
	now = now.Add(5 * time.Minute)
	if _, err := s.Token(); err == nil {
		t.Fatal("an expired token was returned")
	}
	f.fail = false
	if tok() != "c" {
		t.Fatal("no new token after expiry")
	}
	s.ResetTokenOlderThan(now.Add(time.Second))
	if f.forgot != 1 || tok() != "d" {
		t.Fatalf("a refused token was kept (forgot %d)", f.forgot)
	}
}
