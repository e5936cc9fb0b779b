package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path"

	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/spec"
)

// errOffline is what a chart download meets in regatta validate.
var errOffline = errors.New("regatta validate works offline: remote charts and schemas are checked by render, plan and the daemon")

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

// checkTenants renders every tenant profile, offline, for each cluster it
// reaches and reports the objects its tenant may not deploy and the paths
// that leave the tenant's folder, as errors with file and line. Charts
// render in workers bounded as the daemon's are (worker; nil renders in
// this process). Other render failures are warnings: render and plan
// report them in full.
func checkTenants(ctx context.Context, fsys fs.FS, repo *spec.Repository, diags spec.Diagnostics, f *validateFlags, worker *helm.WorkerOptions) spec.Diagnostics {
	if len(repo.Tenants) == 0 {
		return nil
	}
	invalid := invalidFiles(diags)
	r, done := offlineRenderer(f, worker)
	defer done()
	var out diagSet
	for _, p := range repo.Profiles {
		if p.Tenant() == nil || invalid[p.Source.File] || invalid[p.Tenant().Source.File] {
			continue
		}
		for _, c := range repo.Clusters {
			if !p.Matches(c.Metadata.Name, c.Metadata.Labels) {
				continue
			}
			out.add(checkTenantPair(ctx, r, fsys, p, c)...)
			if d, refused := ungrantedSources(repo, p, c); refused {
				out.add(d)
			}
		}
	}
	return out.sorted()
}

// invalidFiles are the files with errors: their documents are not rendered.
func invalidFiles(diags spec.Diagnostics) map[string]bool {
	invalid := map[string]bool{}
	for _, d := range diags.Errors() {
		invalid[d.File] = true
	}
	return invalid
}

// offlineRenderer renders without the network: a chart download fails
// with errOffline, or as the URL policy refuses it; charts render in
// workers bounded as the daemon's are (worker; nil renders in this
// process). done releases the workers.
func offlineRenderer(f *validateFlags, worker *helm.WorkerOptions) (r *render.Renderer, done func()) {
	policy := &netpolicy.Policy{AllowPrefixes: f.allowURLPrefixes, Resolver: noLookups}
	charts := helm.New(helm.Options{HTTPClient: &http.Client{Transport: offlineTransport{policy}}, Worker: worker})
	return render.New(render.Options{Helm: charts}), func() { _ = charts.Close() }
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

func checkTenantPair(ctx context.Context, r *render.Renderer, fsys fs.FS, p *spec.Profile, c *spec.Cluster) spec.Diagnostics {
	facts := render.FactsOf(c, c.Metadata.Labels, DefaultKubernetesVersion)
	res, err := r.Render(ctx, render.Request{FS: fsys, Profile: p, Cluster: facts})
	if err != nil {
		return spec.Diagnostics{renderDiagnostic(p, c, err)}
	}
	var out spec.Diagnostics
	for _, v := range tenancy.Check(p, res, tenancy.Options{FS: fsys}) {
		out = append(out, spec.Diagnostic{File: v.File, Line: v.Line, Message: v.Object + ": " + v.Reason})
	}
	return out
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
// an error when a path leaves the tenant's folder or the tenant may not
// decrypt, a warning otherwise.
func renderDiagnostic(p *spec.Profile, c *spec.Cluster, err error) spec.Diagnostic {
	d := spec.Diagnostic{File: p.Source.File, Line: p.Source.Line, Severity: spec.SeverityWarning,
		Message: fmt.Sprintf("does not render offline for cluster %s: %v", c.Metadata.Name, err)}
	found, addon := render.Innermost(err)
	if found != nil {
		d.File, d.Line, d.Message = found.File, found.Line, found.Err.Error()
	}
	if !spec.Inside(p.Root(), path.Clean(d.File)) && d.File != p.Source.File {
		// a file outside the folder: say where the tenant named it
		d.Message = fmt.Sprintf("add-on %s: %s", addon, d.Message)
		d.File, d.Line = p.Source.File, addonLine(p, addon)
	}
	if refusedByDaemon(err) {
		d.Severity = spec.SeverityError
	}
	return d
}

// refusedByDaemon tells the render failures that the daemon meets too,
// online or not: a path leaving the folder, keys the tenant may not use, a
// URL or schema reference the policy refuses, a chart stopped at a render
// bound.
func refusedByDaemon(err error) bool {
	for _, target := range []error{spec.ErrPathEscapes, render.ErrTenantNoKeys, render.ErrRemoteRefused, helm.ErrSchemaRef, helm.ErrTemplateLimit} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

func addonLine(p *spec.Profile, addon string) int {
	for i, a := range p.Spec.Addons {
		if a.Name == addon {
			return p.Source.LineOf(fmt.Sprintf("spec.addons[%d]", i))
		}
	}
	return p.Source.Line
}
