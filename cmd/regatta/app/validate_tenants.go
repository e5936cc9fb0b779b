package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/render/sandbox"
	"github.com/regatta-dev/regatta/spec"
)

// errOffline is what a download (chart, OCI artifact, schema) meets in
// regatta validate.
var errOffline = errors.New("regatta validate works offline: remote charts, OCI artifacts and schemas are checked by render, plan and the daemon")

// offlineTransport fetches nothing: a URL the policy refuses fails as the
// daemon would refuse it, any other as offline. Host names are not looked
// up (validate sends nothing to the network, DNS included).
type offlineTransport struct{ policy *netpolicy.Policy }

func (o offlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := o.policy.Check(req.Context(), req.URL.String()); err != nil {
		return nil, err
	}
	return nil, errOffline
}

// noLookups is a resolver that never asks a server.
var noLookups = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errOffline
}}

// checkTenants renders every tenant profile, offline (r), for each
// cluster it reaches and reports the objects its tenant may not deploy,
// the paths that leave the tenant's folder and every render failure the
// daemon would meet too, as errors with file and line; what validate
// cannot check offline is a warning (renderDiagnostic).
func checkTenants(ctx context.Context, fsys fs.FS, repo *spec.Repository, diags spec.Diagnostics, r *render.Renderer) spec.Diagnostics {
	if len(repo.Tenants) == 0 {
		return nil
	}
	invalid := invalidFiles(diags)
	var profiles []*spec.Profile
	for _, p := range repo.Profiles {
		if p.Tenant() != nil && !invalid[p.Source.File] && !invalid[p.Tenant().Source.File] {
			profiles = append(profiles, p)
		}
	}
	// profiles render side by side, as many at once as there are CPUs
	// (the workers bound them further), so that programs stopped at a
	// bound cost validate about one bound, not one each
	found := make([]spec.Diagnostics, len(profiles))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range profiles {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			found[i] = checkTenantProfile(ctx, r, fsys, repo, p)
		})
	}
	wg.Wait()
	var out diagSet
	for _, ds := range found {
		out.add(ds...)
	}
	return out.sorted()
}

// checkTenantProfile checks a tenant profile on each cluster it reaches.
func checkTenantProfile(ctx context.Context, r *render.Renderer, fsys fs.FS, repo *spec.Repository, p *spec.Profile) spec.Diagnostics {
	var out spec.Diagnostics
	bounded := false
	for _, c := range repo.Clusters {
		if !p.Matches(c.Metadata.Name, c.Metadata.Labels) {
			continue
		}
		if !bounded {
			// a program stopped at a bound is an error already: it is
			// not run again for the profile's other clusters
			ds, stopped := checkTenantPair(ctx, r, fsys, p, c)
			out = append(out, ds...)
			bounded = stopped
		}
		if d, refused := ungrantedSources(repo, p, c); refused {
			out = append(out, d)
		}
	}
	return out
}

// invalidFiles are the files with errors: their documents are not rendered.
func invalidFiles(diags spec.Diagnostics) map[string]bool {
	invalid := map[string]bool{}
	for _, d := range diags.Errors() {
		invalid[d.File] = true
	}
	return invalid
}

// offlineRenderer renders without the network: a chart download or an
// OCI artifact's pull fails with errOffline, or as the URL policy refuses
// it; charts, Jsonnet and ytt programs render in workers bounded as the
// daemon's are (--helm-render-*, --program-render-*). done releases the
// workers.
func offlineRenderer(f *validateFlags) (r *render.Renderer, done func(), err error) {
	worker, err := f.helmWorker.options()
	if err != nil {
		return nil, nil, err
	}
	programs, err := f.programWorker.pool()
	if err != nil {
		return nil, nil, err
	}
	policy := &netpolicy.Policy{AllowPrefixes: f.allowURLPrefixes, Resolver: noLookups}
	client := &http.Client{Transport: offlineTransport{policy}}
	charts := helm.New(helm.Options{HTTPClient: client, PlainHTTP: f.plainHTTP, Worker: worker})
	r = render.New(render.Options{Helm: charts, Sandbox: programs, OCI: oci.New(oci.Options{HTTPClient: client, PlainHTTP: f.plainHTTP})})
	return r, func() {
		_ = charts.Close()
		if programs != nil {
			programs.Close()
		}
	}, nil
}

// diagSet gathers diagnostics once each (a profile rendered for several
// clusters repeats them).
type diagSet struct {
	seen map[string]bool
	out  spec.Diagnostics
}

func (s *diagSet) add(ds ...spec.Diagnostic) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for _, d := range ds {
		if k := d.Error(); !s.seen[k] {
			s.seen[k] = true
			s.out = append(s.out, d)
		}
	}
}

func (s *diagSet) sorted() spec.Diagnostics {
	s.out.Sort()
	return s.out
}

// checkTenantPair renders p for c and checks its objects; stopped says
// that the render was stopped at a bound (time, memory, output, template
// limits).
func checkTenantPair(ctx context.Context, r *render.Renderer, fsys fs.FS, p *spec.Profile, c *spec.Cluster) (ds spec.Diagnostics, stopped bool) {
	facts := render.FactsOf(c, c.Metadata.Labels, DefaultKubernetesVersion)
	res, err := r.Render(ctx, render.Request{FS: fsys, Profile: p, Cluster: facts})
	if err != nil {
		stopped = errors.Is(err, sandbox.ErrLimit) || errors.Is(err, helm.ErrTemplateLimit)
		return spec.Diagnostics{renderDiagnostic(p, c, err)}, stopped
	}
	for _, v := range tenancy.Check(p, res, tenancy.Options{FS: fsys}) {
		ds = append(ds, spec.Diagnostic{File: v.File, Line: v.Line, Message: v.Object + ": " + v.Reason})
	}
	return ds, false
}

// ungrantedSources reports, as the daemon refuses it, an event profile
// that would read clusters outside its tenant's grant for destination c
// (by the clusters' declared labels).
func ungrantedSources(repo *spec.Repository, p *spec.Profile, c *spec.Cluster) (spec.Diagnostic, bool) {
	declared := func(c *spec.Cluster) map[string]string { return c.Metadata.Labels }
	_, err := p.EventSourceClusters(c, repo.Clusters, declared)
	var ue *spec.UngrantedSourcesError
	if !errors.As(err, &ue) {
		return spec.Diagnostic{}, false
	}
	return spec.Diagnostic{
		File:    p.Source.File,
		Line:    p.Source.LineOf(ue.Field),
		Field:   ue.Field,
		Message: ue.Reason(),
	}, true
}

// renderDiagnostic places a render failure at its innermost file and line:
// an error, as the daemon refuses the pair, unless validate could not
// tell offline (offlineOnly).
func renderDiagnostic(p *spec.Profile, c *spec.Cluster, err error) spec.Diagnostic {
	d := spec.Diagnostic{File: p.Source.File, Line: p.Source.Line, Severity: spec.SeverityError,
		Message: fmt.Sprintf("does not render for cluster %s: %v", c.Metadata.Name, err)}
	found, addon := render.Innermost(err)
	if found != nil {
		d.File, d.Line, d.Message = found.File, found.Line, found.Err.Error()
	}
	if !spec.Inside(p.Root(), path.Clean(d.File)) && d.File != p.Source.File {
		// a file outside the folder: say where the tenant named it
		d.Message = fmt.Sprintf("add-on %s: %s", addon, d.Message)
		d.File, d.Line = p.Source.File, addonLine(p, addon)
	}
	if !refusedByDaemon(err) && offlineOnly(err) {
		d.Severity = spec.SeverityWarning
		d.Message = fmt.Sprintf("not checked offline for cluster %s: %s", c.Metadata.Name, d.Message)
	}
	return d
}

// refusedByDaemon tells the render failures that the daemon meets
// whatever it can reach: a path leaving the folder, keys the tenant may
// not use, a URL or schema reference the policy refuses, a program or
// chart stopped at a render bound.
func refusedByDaemon(err error) bool {
	for _, target := range []error{spec.ErrPathEscapes, render.ErrTenantNoKeys, render.ErrRemoteRefused,
		netpolicy.ErrRefused, helm.ErrSchemaRef, helm.ErrTemplateLimit, sandbox.ErrLimit} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// offlineOnly tells the render failures that may be validate's alone:
// what it does not fetch (charts, OCI artifacts, schemas), the SOPS keys
// it does not hold, and a template reading a cluster fact (a classifier's
// label, a value) that only the cluster gives. Every other failure is the
// daemon's too.
func offlineOnly(err error) bool {
	var te *render.TemplateError
	return errors.Is(err, errOffline) || errors.Is(err, render.ErrNoKeyring) ||
		errors.As(err, &te) && te.Key != "" ||
		// a library that rewrites its errors (Helm's registry client)
		// keeps errOffline's text only
		strings.Contains(err.Error(), errOffline.Error())
}

func addonLine(p *spec.Profile, addon string) int {
	for i, a := range p.Spec.Addons {
		if a.Name == addon {
			return p.Source.LineOf(fmt.Sprintf("spec.addons[%d]", i))
		}
	}
	return p.Source.Line
}
