package notify

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/spec"
)

// received is one request a loopback destination took.
type received struct {
	method, path, contentType, auth, signature string
	body                                       []byte
}

// endpoint is a loopback server that records each request and answers
// with answer (200 {"ok":true} by default).
type endpoint struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) (int, string)
}

func newEndpoint(t *testing.T) *endpoint {
	e := &endpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got = append(e.got, received{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), r.Header.Get(SignatureHeader), body})
		n := len(e.got)
		e.mu.Unlock()
		code, text := http.StatusOK, `{"ok":true,"channel":"C1","ts":"1.0"}`
		if e.answer != nil {
			code, text = e.answer(n)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, text)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) requests() []received {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]received(nil), e.got...)
}

// env allows the test server's address, as --allow-url-prefix does.
func env(e *endpoint) Env {
	return Env{HTTP: (&netpolicy.Policy{AllowPrefixes: []string{e.URL + "/"}}).Client()}
}

var sample = Message{Alert: "ops", Kind: spec.AlertOnFailed, Profile: "web", Revision: "abc", Count: 2,
	Title: "profile web failed on 2 clusters at abc",
	Text:  "profile web failed on 2 clusters at abc\nclusters: a, b\n- a: <script>alert(1)</script> \x1b[31mred\x1b[0m\nrevert: git revert abc"}

func jsonOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, b)
	}
	return m
}

// TestHTTPDestinationsSendDocumentedRequests: each chat destination sends
// the request its service documents (method, path, auth, JSON fields),
// with text a profile controls stripped of control characters.
func TestHTTPDestinationsSendDocumentedRequests(t *testing.T) {
	e := newEndpoint(t)
	secret := func(kv ...string) map[string][]byte {
		m := map[string][]byte{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = []byte(kv[i+1])
		}
		return m
	}
	for _, tc := range []struct {
		n     spec.Notification
		data  map[string][]byte
		check func(t *testing.T, r received)
	}{
		{spec.Notification{Name: "hook", Type: spec.NotifyWebhook}, secret("address", e.URL+"/hook", "secret", "k3y"), func(t *testing.T, r received) {
			mac := hmac.New(sha256.New, []byte("k3y"))
			mac.Write(r.body)
			if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); r.signature != want {
				t.Errorf("signature %q, want %q", r.signature, want)
			}
			if m := jsonOf(t, r.body); m["profile"] != "web" || m["count"] != 2.0 || m["kind"] != "Failed" {
				t.Errorf("body %v", m)
			}
		}},
		{spec.Notification{Name: "slack", Type: spec.NotifySlack}, secret("address", e.URL+"/services/T/B/X"), func(t *testing.T, r received) {
			text, _ := jsonOf(t, r.body)["text"].(string)
			if r.path != "/services/T/B/X" || !strings.HasPrefix(text, "*profile web failed") || !strings.Contains(text, "&lt;script&gt;") || strings.Contains(text, "\x1b") {
				t.Errorf("slack webhook: %s %q", r.path, text)
			}
		}},
		{spec.Notification{Name: "slackbot", Type: spec.NotifySlack, Channel: "C1"}, secret("token", "xoxb-1", "address", e.URL+"/api"), func(t *testing.T, r received) {
			form, _ := url.ParseQuery(string(r.body))
			authed := r.auth == "Bearer xoxb-1" || form.Get("token") == "xoxb-1" // Slack takes either
			if r.path != "/api/chat.postMessage" || !authed || form.Get("channel") != "C1" || !strings.Contains(form.Get("text"), "profile web") {
				t.Errorf("slack bot: %s %q %v", r.path, r.auth, form)
			}
		}},
		{spec.Notification{Name: "teams", Type: spec.NotifyTeams}, secret("address", e.URL+"/workflows"), func(t *testing.T, r received) {
			m := jsonOf(t, r.body)
			att := m["attachments"].([]any)[0].(map[string]any)
			card := att["content"].(map[string]any)
			if m["type"] != "message" || att["contentType"] != "application/vnd.microsoft.card.adaptive" || card["type"] != "AdaptiveCard" {
				t.Errorf("teams: %v", m)
			}
		}},
		{spec.Notification{Name: "discord", Type: spec.NotifyDiscord}, secret("address", e.URL+"/api/webhooks/1/x"), func(t *testing.T, r received) {
			m := jsonOf(t, r.body)
			if c, _ := m["content"].(string); !strings.HasPrefix(c, "profile web") || m["allowed_mentions"] == nil {
				t.Errorf("discord: %v", m)
			}
		}},
		{spec.Notification{Name: "chat", Type: spec.NotifyGoogleChat}, secret("address", e.URL+"/v1/spaces/S/messages"), func(t *testing.T, r received) {
			if c, _ := jsonOf(t, r.body)["text"].(string); !strings.HasPrefix(c, "profile web") {
				t.Errorf("google chat: %s", r.body)
			}
		}},
		{spec.Notification{Name: "webex", Type: spec.NotifyWebex, Channel: "room-1"}, secret("token", "wbx", "address", e.URL+"/v1/messages"), func(t *testing.T, r received) {
			m := jsonOf(t, r.body)
			if r.auth != "Bearer wbx" || m["roomId"] != "room-1" || m["text"] == nil {
				t.Errorf("webex: %q %v", r.auth, m)
			}
		}},
		{spec.Notification{Name: "tg", Type: spec.NotifyTelegram, Channel: "-100"}, secret("token", "123:abc", "address", e.URL), func(t *testing.T, r received) {
			m := jsonOf(t, r.body)
			if r.path != "/bot123:abc/sendMessage" || m["chat_id"] != "-100" || m["text"] == nil {
				t.Errorf("telegram: %s %v", r.path, m)
			}
		}},
	} {
		t.Run(tc.n.Name, func(t *testing.T) {
			before := len(e.requests())
			dst, err := Build(tc.n, tc.data, env(e))
			if err != nil {
				t.Fatal(err)
			}
			if err := dst.Send(context.Background(), sample); err != nil {
				t.Fatal(err)
			}
			got := e.requests()
			if len(got) != before+1 {
				t.Fatalf("%d requests, want 1", len(got)-before)
			}
			r := got[before]
			if r.method != http.MethodPost {
				t.Errorf("method %s", r.method)
			}
			tc.check(t, r)
		})
	}
}

// TestDestinationsObeyTheURLPolicy: a destination on loopback that no
// --allow-url-prefix names is refused, and the error names no address
// (a webhook URL is a secret).
func TestDestinationsObeyTheURLPolicy(t *testing.T) {
	e := newEndpoint(t)
	dst, err := Build(spec.Notification{Name: "slack", Type: spec.NotifySlack},
		map[string][]byte{"address": []byte(e.URL + "/services/T/B/SECRET")}, Env{HTTP: (&netpolicy.Policy{}).Client()})
	if err != nil {
		t.Fatal(err)
	}
	err = dst.Send(context.Background(), sample)
	if !errors.Is(err, netpolicy.ErrRefused) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v, want a refusal by the URL policy naming no secret", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Fatalf("%d requests reached a refused destination", n)
	}
}

// secrets is a Secrets from a map, as the management cluster would hold.
type secrets map[string]map[string][]byte

func (s secrets) Secret(_ context.Context, name string) (map[string][]byte, error) {
	d, ok := s[name]
	if !ok {
		return nil, errors.New("secret " + name + " not found")
	}
	return d, nil
}

// TestDispatcherRetriesADestinationThatIsDown: a destination down for a
// while gets the message once it answers again, and Deliver never waits
// for it.
func TestDispatcherRetriesADestinationThatIsDown(t *testing.T) {
	e := newEndpoint(t)
	var down atomic.Bool
	down.Store(true)
	e.answer = func(int) (int, string) {
		if down.Load() {
			return http.StatusServiceUnavailable, "down"
		}
		return http.StatusOK, "ok"
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := NewDispatcher(ctx, DispatchOptions{Secrets: secrets{"hook": {"address": []byte(e.URL + "/h")}}, Env: env(e),
		Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	n := spec.Notification{Name: "h", Type: spec.NotifyWebhook, SecretRef: &spec.LocalSecretRef{Name: "hook"}}
	start := time.Now()
	for i := range 3 {
		m := sample
		m.Title = string(rune('a' + i))
		d.Deliver(m, n)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Fatalf("Deliver waited %s for a destination that is down", waited)
	}
	waitFor(t, func() bool { return len(e.requests()) >= 3 }) // retried while down
	down.Store(false)
	waitFor(t, func() bool {
		ok := 0
		for _, r := range e.requests() {
			if jsonOf(t, r.body)["title"] != nil {
				ok++
			}
		}
		return len(e.requests()) >= 3 && ok >= 3 && !down.Load()
	})
	// every message arrives, in order, once the destination is up
	waitFor(t, func() bool {
		var titles []string
		reqs := e.requests()
		for _, r := range reqs[len(reqs)-3:] {
			titles = append(titles, jsonOf(t, r.body)["title"].(string))
		}
		return strings.Join(titles, "") == "abc"
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSMTPSendsMail: a mail goes to a loopback SMTP server with the
// subject and body, as go-mail speaks SMTP.
func TestSMTPSendsMail(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	mails := make(chan string, 1)
	go serveSMTP(ln, mails)
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	dst, err := Build(spec.Notification{Name: "mail", Type: spec.NotifySMTP}, map[string][]byte{
		"host": []byte(host), "port": []byte(port), "from": []byte("regatta@example.com"), "to": []byte("oncall@example.com, lead@example.com"), "tls": []byte("none"),
	}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Send(context.Background(), sample); err != nil {
		t.Fatal(err)
	}
	got := <-mails
	for _, want := range []string{"MAIL FROM:<regatta@example.com>", "RCPT TO:<oncall@example.com>", "RCPT TO:<lead@example.com>",
		"Subject: [regatta] profile web failed on 2 clusters at abc", "revert: git revert abc"} {
		if !strings.Contains(got, want) {
			t.Errorf("the SMTP session lacks %q:\n%s", want, got)
		}
	}
}

// serveSMTP answers one SMTP session (RFC 5321's minimum) and sends
// what the client said.
func serveSMTP(ln net.Listener, out chan<- string) {
	conn, err := ln.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	var log strings.Builder
	r, w := bufio.NewReader(conn), conn
	io.WriteString(w, "220 localhost ESMTP test\r\n")
	inData := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			out <- log.String()
			return
		}
		log.WriteString(line)
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case inData && cmd == ".":
			inData = false
			io.WriteString(w, "250 queued\r\n")
		case inData:
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			io.WriteString(w, "250-localhost\r\n250 8BITMIME\r\n")
		case cmd == "DATA":
			inData = true
			io.WriteString(w, "354 go ahead\r\n")
		case cmd == "QUIT":
			io.WriteString(w, "221 bye\r\n")
			out <- log.String()
			return
		default:
			io.WriteString(w, "250 ok\r\n")
		}
	}
}
