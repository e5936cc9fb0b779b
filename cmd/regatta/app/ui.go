package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui"
	"github.com/regatta-dev/regatta/ui/access"
)

// DefaultUIAddr is where `regatta ui` listens unless --addr says otherwise:
// loopback, where the UI needs no authentication.
const DefaultUIAddr = "127.0.0.1:8080"

// uiFlags are the flags of `regatta ui`.
type uiFlags struct {
	addr         string
	repoURL      string
	statusBranch string
	refresh      time.Duration
	title        string
	dashboardURL string
	logFormat    string
	logLevel     string
	git          gitFlags
	access       access.Flags
	// managementKubeconfig is the cluster of --ui-auth's reviews.
	managementKubeconfig string
	// listening, when set, is told the address served (tests).
	listening func(net.Addr)
}

func newUICommand(stderr io.Writer) *cobra.Command {
	f := &uiFlags{}
	cmd := &cobra.Command{
		Use:   "ui [DIR]",
		Short: "Serve the read-only web UI of the fleet's status branch",
		Long: `Serves a read-only web UI of the fleet: the summary and problems, a
clusters × profiles matrix with filters and pages, each cluster, each
profile with its rollout and dependencies, the revisions timeline with time
travel (?at=), and event add-on instances. Pages update live, without a
reload, when the status branch moves.

The status is read from the status branch (default regatta/status; a local
branch, else origin/<branch>) of the Git repository in DIR (default "."),
or from a remote repository with --repo, fetched every --refresh. Nothing
is written: where a person would act, the UI shows the commit to make.

By default it listens on loopback, where everyone who reaches it sees the
whole fleet; elsewhere readers log in (--ui-auth kubernetes: a token the
management cluster reviews; --ui-auth oidc: OpenID Connect) and a tenant's
reader sees that tenant's clusters and profiles only. The daemon serves the
same UI with regatta run --ui-addr.`,
		Example: `  regatta ui
  regatta ui --repo https://git.example.com/platform/fleet-infra.git --git-token-file /etc/regatta/token
  regatta ui --addr 127.0.0.1:9090 --refresh 30s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := optionalDir(args)
			if err != nil {
				return err
			}
			return runUI(cmd.Context(), f, dir, stderr)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *uiFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.addr, "addr", DefaultUIAddr, "address to serve the UI on (off loopback it needs --ui-auth kubernetes or oidc)")
	fl.StringVar(&f.repoURL, "repo", "", "read a remote repository instead of DIR")
	fl.StringVar(&f.statusBranch, "status-branch", DefaultStatusBranch, "branch that holds the status/ folder")
	fl.DurationVar(&f.refresh, "refresh", 10*time.Second, "how often the status branch is read (fetched, with --repo) for changes")
	fl.StringVar(&f.title, "title", "regatta", "name of the fleet in the pages' titles")
	fl.StringVar(&f.dashboardURL, "dashboard-url", "", "link to the status branch on the Git host, shown on every page")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.managementKubeconfig, "management-kubeconfig", "", `kubeconfig of the management cluster that reviews readers' tokens and rights (--ui-auth kubernetes, or oidc without group flags; "in-cluster" for the pod's service account)`)
	f.git.register(fl)
	f.access.Register(fl)
}

func runUI(ctx context.Context, f *uiFlags, dir string, stderr io.Writer) error {
	if f.refresh <= 0 {
		return usageError("--refresh must be above 0, got %s", f.refresh)
	}
	log, err := newLogger(stderr, f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	mgmt, err := managementConfig(f.managementKubeconfig)
	if err != nil {
		return err
	}
	h, follow, err := newUIHistory(ctx, uiSource{repoURL: f.repoURL, dir: dir, branch: f.statusBranch, git: &f.git}, log)
	if err != nil {
		return err
	}
	srv := ui.New(ui.Options{History: h, Log: log, Title: f.title, DashboardURL: f.dashboardURL})
	defer srv.Close() // ends the background walks of the history (since when)
	gate, err := uiAccess(ctx, &f.access, f.addr, mgmt, srv, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usageError("--addr %s: %v", f.addr, err)
	}
	log.Info("web UI", "addr", "http://"+ln.Addr().String(), "statusBranch", f.statusBranch)
	if f.listening != nil {
		f.listening(ln.Addr())
	}
	go follow(ctx, f.refresh, srv.Moved)
	return serveUI(ctx, ln, gate(srv.Handler()))
}

// serveUI serves h on ln until ctx ends; requests' contexts end with ctx,
// so the live streams close and the shutdown does not wait for them.
func serveUI(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("web UI shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// uiAccess is who may read the UI served on addr (ui/access): with
// --ui-auth none (the default) anyone, on loopback only; else readers
// reviewed by the management cluster mgmt or logged in by OpenID Connect,
// each seeing the whole fleet or some tenants of srv's newest status.
func uiAccess(ctx context.Context, flags *access.Flags, addr string, mgmt *rest.Config, srv *ui.Server, log *slog.Logger) (func(http.Handler) http.Handler, error) {
	var kube kubernetes.Interface
	if mgmt != nil {
		c, err := kubernetes.NewForConfig(mgmt)
		if err != nil {
			return nil, usageError("--management-kubeconfig: %v", err)
		}
		kube = c
	}
	gate, err := flags.Gate(addr, kube, func() []string { return srv.Tenants(ctx) }, log)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return gate.Wrap, nil
}

// speakerWords is a daemon's word, for the cluster page, on who speaks
// for a cluster.
func speakerWords(d *reconciler.Daemon) func(string) string {
	return func(cluster string) string {
		sp := d.Speaker(cluster)
		who := "this daemon"
		if sp.Name != "" {
			who = "this process (" + sp.Name + ")"
		}
		switch {
		case sp.Reconciles:
			return who + " reconciles this cluster now"
		case sp.Shows:
			return who + " writes this cluster's record but does not reconcile it (its agent or a handover does)"
		}
		return who + " does not reconcile this cluster: another replica or the cluster's agent speaks for it"
	}
}

// webUI is the daemon's web UI (regatta run --ui-addr): its server, fed
// by the daemon's status, and how it is served.
type webUI struct {
	srv    *ui.Server
	gate   func(http.Handler) http.Handler
	follow func(ctx context.Context, every time.Duration, onMove func())
}

// newWebUI builds the daemon's web UI when --ui-addr is set (nil
// otherwise), over the status branch of the followed repository.
func (f *runFlags) newWebUI(ctx context.Context, log *slog.Logger) (*webUI, error) {
	if f.uiAddr == "" {
		return nil, nil
	}
	if f.statusBranch == "" {
		return nil, usageError("--ui-addr needs a status branch: --status-branch is empty")
	}
	h, follow, err := newUIHistory(ctx, uiSource{repoURL: f.repoURL, branch: f.statusBranch, git: &f.git, pending: true}, log)
	if err != nil {
		return nil, err
	}
	srv := ui.New(ui.Options{History: h, Log: log})
	gate, err := uiAccess(ctx, &f.uiAccess, f.uiAddr, f.mgmt, srv, log)
	if err != nil {
		return nil, err
	}
	return &webUI{srv: srv, gate: gate, follow: follow}, nil
}

// serve listens on addr; it stops with ctx.
func (w *webUI) serve(ctx context.Context, addr string, refresh time.Duration, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--ui-addr %s: %v", addr, err)
	}
	log.Info("listening", "what", "ui", "addr", ln.Addr().String())
	go w.follow(ctx, refresh, w.srv.Moved)
	go func() {
		defer w.srv.Close() // ends the background walks of the history (since when)
		if err := serveUI(ctx, ln, w.gate(w.srv.Handler())); err != nil {
			log.Error("web UI stopped", "error", err)
		}
	}()
	return nil
}

// observe chains the UI after another status observer.
func (w *webUI) observe(next func(s status.Snapshot)) func(s status.Snapshot) {
	if w == nil {
		return next
	}
	return func(s status.Snapshot) {
		if next != nil {
			next(s)
		}
		w.srv.Live(s)
	}
}
