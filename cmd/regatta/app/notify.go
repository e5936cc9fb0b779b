package app

import (
	"context"
	"io/fs"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/notify"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// notifyFlags configure the notifications of alerts/ (docs/operations.md
// "Notifications").
type notifyFlags struct {
	namespace    string
	groupWait    time.Duration
	dashboardURL string
}

func (n *notifyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&n.namespace, "notify-namespace", "", "namespace of the management cluster holding the notifications' Secrets, their ledger (ConfigMap regatta-notifications) and their Kubernetes Events (default: --leader-elect-namespace)")
	fl.DurationVar(&n.groupWait, "notify-group-wait", notify.DefaultGroupWait, "how long a happening lasts before its first message, so that the clusters failing together go in one message")
	fl.StringVar(&n.dashboardURL, "notify-dashboard-url", "", "the status dashboard's address on the Git host, linked from each message (e.g. https://github.com/org/fleet/blob/regatta/status/status/README.md)")
}

// notifier builds the notifier and its dispatcher, which run until ctx
// ends. It returns the status hook (the daemon calls it after each status
// commit of the fleet's status, so only the process that writes the
// fleet-wide status sends) and a setter of the daemon it reads the alerts
// from.
func (f *runFlags) notifier(ctx context.Context, log *slog.Logger, m *metrics.Metrics, keys *sops.Keyring) (func(status.Snapshot), func(*reconciler.Daemon), error) {
	ns := f.notify.namespace
	if ns == "" {
		ns = f.leaderElectNamespace
	}
	log = log.With("component", "notify")
	env := notify.Env{HTTP: (&netpolicy.Policy{AllowPrefixes: f.render.allowURLPrefixes}).Client()}
	var daemon atomic.Pointer[reconciler.Daemon]
	files := notify.RepoSecretFiles{Keys: keys, InForce: func() (fs.FS, *spec.Repository) {
		if d := daemon.Load(); d != nil {
			return d.InForce()
		}
		return nil, nil
	}}
	dopts := notify.DispatchOptions{Env: env, Log: log, Files: files, Count: func(typ, result string) { m.Notifications.WithLabelValues(typ, result).Inc() }}
	nopts := notify.Options{GroupWait: f.notify.groupWait, Log: log, Checked: func(o string) { m.NotificationChecks.WithLabelValues(o).Inc() }}
	if f.mgmt != nil {
		cs, err := kubernetes.NewForConfig(f.mgmt)
		if err != nil {
			return nil, nil, err
		}
		dopts.Secrets = notify.KubeSecrets{Client: cs, Namespace: ns}
		dopts.Env.Events = notify.KubeEvents{Client: cs, Namespace: ns}
		nopts.Ledger = &notify.ConfigMapLedger{Client: cs, Namespace: ns, Name: "regatta-notifications"}
	}
	if url := strings.TrimSpace(f.notify.dashboardURL); url != "" {
		nopts.Link = func(notify.Message) string { return url }
	}
	disp := notify.NewDispatcher(ctx, dopts)
	nopts.Deliver = disp.Deliver
	n := notify.New(nopts)
	go n.Run(ctx)
	observe := func(s status.Snapshot) {
		if d := daemon.Load(); d != nil {
			n.SetAlerts(d.Alerts())
		}
		n.Observe(s)
	}
	return observe, daemon.Store, nil
}
