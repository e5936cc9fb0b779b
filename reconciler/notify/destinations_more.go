package notify

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	mail "github.com/wneessen/go-mail"

	"github.com/regatta-dev/regatta/spec"
)

// Default API addresses; a Secret's address key replaces them (a proxy,
// a test server).
const (
	webexAPI    = "https://webexapis.com/v1/messages"
	telegramAPI = "https://api.telegram.org"
)

// webex posts to a room with a bot token (POST /v1/messages).
type webex struct {
	url, token, room string
	http             *http.Client
}

func webexOf(n spec.Notification, get func(string) string, room string, hc *http.Client) (Destination, error) {
	if get("token") == "" || room == "" {
		return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "needs the Secret's token key and a room id (channel)"}
	}
	url := get("address")
	if url == "" {
		url = webexAPI
	}
	return &webex{url: url, token: get("token"), room: room, http: hc}, nil
}

func (w *webex) Send(ctx context.Context, m Message) error {
	h := http.Header{"Authorization": {"Bearer " + w.token}}
	return post(ctx, w.http, spec.NotifyWebex, w.url, map[string]any{"roomId": w.room, "text": plain(m.Text)}, h, nil)
}

// telegram sends with a bot token (POST /bot<token>/sendMessage).
type telegram struct {
	url, chat string
	http      *http.Client
}

func telegramOf(n spec.Notification, get func(string) string, chat string, hc *http.Client) (Destination, error) {
	if get("token") == "" || chat == "" {
		return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "needs the Secret's token key and a chat id (channel)"}
	}
	base := get("address")
	if base == "" {
		base = telegramAPI
	}
	return &telegram{url: strings.TrimSuffix(base, "/") + "/bot" + get("token") + "/sendMessage", chat: chat, http: hc}, nil
}

func (t *telegram) Send(ctx context.Context, m Message) error {
	return post(ctx, t.http, spec.NotifyTelegram, t.url, map[string]any{"chat_id": t.chat, "text": truncate(plain(m.Text), 4096)}, nil, nil)
}

// smtpDest sends mail through go-mail.
type smtpDest struct {
	host     string
	port     int
	user     string
	password string
	from     string
	to       []string
	tls      mail.TLSPolicy
}

func smtpOf(n spec.Notification, get func(string) string) (Destination, error) {
	d := &smtpDest{host: get("host"), port: 587, user: get("username"), password: get("password"), from: get("from"), tls: mail.TLSMandatory}
	for _, to := range strings.Split(get("to"), ",") {
		if to = strings.TrimSpace(to); to != "" {
			d.to = append(d.to, to)
		}
	}
	if p := get("port"); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: fmt.Sprintf("port %q is not a port number", p)}
		}
		d.port = port
	}
	switch get("tls") {
	case "", "mandatory":
	case "opportunistic":
		d.tls = mail.TLSOpportunistic
	case "none":
		d.tls = mail.NoTLS
	default:
		return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "tls must be mandatory (default), opportunistic or none"}
	}
	if d.host == "" || d.from == "" || len(d.to) == 0 {
		return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "needs the Secret's host, from and to keys"}
	}
	return d, nil
}

func (d *smtpDest) Send(ctx context.Context, m Message) error {
	msg := mail.NewMsg()
	if err := msg.From(d.from); err != nil {
		return &SendError{Type: spec.NotifySMTP, Err: err}
	}
	if err := msg.To(d.to...); err != nil {
		return &SendError{Type: spec.NotifySMTP, Err: err}
	}
	msg.Subject("[regatta] " + plain(strings.SplitN(m.Text, "\n", 2)[0]))
	msg.SetBodyString(mail.TypeTextPlain, plain(m.Text))
	opts := []mail.Option{mail.WithPort(d.port), mail.WithTLSPolicy(d.tls)}
	if d.user != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(d.user), mail.WithPassword(d.password))
	}
	c, err := mail.NewClient(d.host, opts...)
	if err != nil {
		return &SendError{Type: spec.NotifySMTP, Err: err}
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return &SendError{Type: spec.NotifySMTP, Err: err}
	}
	return nil
}

// EventSink records a Kubernetes Event in the management cluster.
type EventSink interface {
	Event(ctx context.Context, warning bool, reason, message string) error
}

type eventDest struct{ sink EventSink }

func (e *eventDest) Send(ctx context.Context, m Message) error {
	reason := m.Kind
	if m.Resolved {
		reason += "Resolved"
	}
	return e.sink.Event(ctx, !m.Resolved && m.Kind != spec.AlertOnRolloutDone, reason, truncate(plain(m.Text), 1024))
}
