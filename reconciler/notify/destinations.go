package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// Destination sends messages to one place.
type Destination interface {
	Send(ctx context.Context, m Message) error
}

// ConfigError says what a notification's Secret lacks.
type ConfigError struct {
	Notification string
	Type         string
	Reason       string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("notification %s (%s): %s", e.Notification, e.Type, e.Reason)
}

// SendError is a destination's refusal or failure. Its text never holds
// the address beyond scheme and host: a webhook's path or a bot's URL is
// a credential.
type SendError struct {
	Type   string
	Status int // the HTTP status, 0 when none came back
	Err    error
	// Address is the secret address, scrubbed from the text.
	Address string
}

func (e *SendError) Error() string {
	msg := scrub(e.Err.Error(), e.Address)
	if e.Status != 0 {
		return fmt.Sprintf("%s: answered %d: %s", e.Type, e.Status, msg)
	}
	return fmt.Sprintf("%s: %s", e.Type, msg)
}

// scrub replaces a secret address in text by its scheme and host.
func scrub(text, address string) string {
	if address == "" {
		return text
	}
	shown := "the destination"
	if u, err := neturl.Parse(address); err == nil && u.Host != "" {
		shown = u.Scheme + "://" + u.Host + "/…"
	}
	return strings.ReplaceAll(text, address, shown)
}

func (e *SendError) Unwrap() error { return e.Err }

// Env is what destinations are built with.
type Env struct {
	// HTTP is the client of every HTTP destination: the URL policy's
	// (render/netpolicy), so a destination obeys --allow-url-prefix.
	HTTP *http.Client
	// Events records Kubernetes Events in the management cluster, for
	// kubernetesEvent notifications.
	Events EventSink
}

// Build makes a notification's destination from its Secret's data.
func Build(n spec.Notification, data map[string][]byte, env Env) (Destination, error) {
	get := func(k string) string { return strings.TrimSpace(string(data[k])) }
	need := func(keys ...string) error {
		for _, k := range keys {
			if get(k) == "" {
				return &ConfigError{Notification: n.Name, Type: n.Type, Reason: fmt.Sprintf("its Secret %s has no key %q", secretName(n), k)}
			}
		}
		return nil
	}
	channel := n.Channel
	if channel == "" {
		channel = get("channel")
	}
	hc := env.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	switch n.Type {
	case spec.NotifyWebhook:
		return &webhook{url: get("address"), secret: data["secret"], http: hc}, need("address")
	case spec.NotifySlack:
		if get("token") != "" {
			if channel == "" {
				return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "a bot token needs a channel (spec.notifications[].channel or the Secret's channel key)"}
			}
			opts := []slack.Option{slack.OptionHTTPClient(hc)}
			if api := get("address"); api != "" {
				opts = append(opts, slack.OptionAPIURL(strings.TrimSuffix(api, "/")+"/"))
			}
			return &slackBot{api: slack.New(get("token"), opts...), channel: channel}, nil
		}
		return &slackWebhook{url: get("address"), http: hc}, need("address")
	case spec.NotifyTeams:
		return &jsonPost{kind: n.Type, url: get("address"), http: hc, body: teamsBody}, need("address")
	case spec.NotifyDiscord:
		return &jsonPost{kind: n.Type, url: get("address"), http: hc, body: discordBody}, need("address")
	case spec.NotifyGoogleChat:
		return &jsonPost{kind: n.Type, url: get("address"), http: hc, body: googleChatBody}, need("address")
	case spec.NotifyWebex:
		return webexOf(n, get, channel, hc)
	case spec.NotifyTelegram:
		return telegramOf(n, get, channel, hc)
	case spec.NotifySMTP:
		return smtpOf(n, get)
	case spec.NotifyEvent:
		if env.Events == nil {
			return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "no management cluster to record Events in"}
		}
		return &eventDest{sink: env.Events}, nil
	}
	return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "unknown type"}
}

// secretName names a notification's credentials in errors and queues:
// its Secret's name, or its secretFile.
func secretName(n spec.Notification) string {
	switch {
	case n.SecretFile != "":
		return n.SecretFile
	case n.SecretRef == nil:
		return ""
	}
	return n.SecretRef.Name
}

// post sends a JSON body and reads the answer; a status of 300 or more is
// an error naming the status (never the URL, which may hold a token). A
// signing key adds X-Regatta-Signature (sign).
func post(ctx context.Context, hc *http.Client, kind, url string, body any, header http.Header, key []byte) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return &SendError{Type: kind, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return &SendError{Type: kind, Err: err, Address: url}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	if len(key) > 0 {
		req.Header.Set(SignatureHeader, sign(key, raw))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return &SendError{Type: kind, Err: err, Address: url}
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode >= 300 {
		return &SendError{Type: kind, Status: resp.StatusCode, Err: errors.New(strings.TrimSpace(string(msg))), Address: url}
	}
	return nil
}

// sign is the generic webhook's signature: sha256=<hex of HMAC-SHA256 of
// the body with the Secret's key>.
func sign(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// webhook posts the Message as JSON, signed with HMAC-SHA256 in
// X-Regatta-Signature when the Secret has a secret key.
type webhook struct {
	url    string
	secret []byte
	http   *http.Client
}

// SignatureHeader carries the generic webhook's signature.
const SignatureHeader = "X-Regatta-Signature"

func (w *webhook) Send(ctx context.Context, m Message) error {
	return post(ctx, w.http, spec.NotifyWebhook, w.url, m, nil, w.secret)
}

// slackWebhook posts to a Slack incoming webhook through slack-go.
type slackWebhook struct {
	url  string
	http *http.Client
}

func (s *slackWebhook) Send(ctx context.Context, m Message) error {
	err := slack.PostWebhookCustomHTTPContext(ctx, s.url, s.http, &slack.WebhookMessage{Text: slackText(m)})
	if err != nil {
		return &SendError{Type: spec.NotifySlack, Err: err, Address: s.url}
	}
	return nil
}

// slackBot posts with a bot token (chat.postMessage) through slack-go.
type slackBot struct {
	api     *slack.Client
	channel string
}

func (s *slackBot) Send(ctx context.Context, m Message) error {
	_, _, err := s.api.PostMessageContext(ctx, s.channel, slack.MsgOptionText(slackText(m), false))
	if err != nil {
		return &SendError{Type: spec.NotifySlack, Err: err}
	}
	return nil
}

// slackText is the message in Slack's mrkdwn, with &, < and > escaped
// as Slack requires (a profile's text never makes a link or a mention).
func slackText(m Message) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	lines := strings.Split(esc.Replace(plain(m.Text)), "\n")
	lines[0] = "*" + lines[0] + "*"
	return strings.Join(lines, "\n")
}

// plain is text a profile or a cluster controls, stripped of what a chat
// client or a terminal would act on (status.Printable: ANSI sequences,
// control characters, bidirectional overrides).
func plain(s string) string { return status.Printable(s) }

// jsonPost posts a body built from the message.
type jsonPost struct {
	kind string
	url  string
	http *http.Client
	body func(Message) any
}

func (j *jsonPost) Send(ctx context.Context, m Message) error {
	return post(ctx, j.http, j.kind, j.url, j.body(m), nil, nil)
}

// teamsBody is an Adaptive Card message, as Teams' workflow webhooks
// ("Post to a channel when a webhook request is received") take it.
func teamsBody(m Message) any {
	lines := strings.Split(plain(m.Text), "\n")
	body := []map[string]any{{"type": "TextBlock", "text": lines[0], "weight": "Bolder", "wrap": true}}
	for _, l := range lines[1:] {
		body = append(body, map[string]any{"type": "TextBlock", "text": l, "wrap": true})
	}
	return map[string]any{
		"type": "message",
		"attachments": []map[string]any{{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"content": map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"type":    "AdaptiveCard", "version": "1.4", "body": body,
			},
		}},
	}
}

// discordBody is a Discord webhook message: content at most 2,000
// characters, no mentions parsed.
func discordBody(m Message) any {
	return map[string]any{"content": truncate(plain(m.Text), 2000), "allowed_mentions": map[string]any{"parse": []string{}}}
}

// googleChatBody is a Google Chat webhook message.
func googleChatBody(m Message) any { return map[string]any{"text": plain(m.Text)} }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
