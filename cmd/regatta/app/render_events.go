package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/events"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// readEventResources reads the objects of --event-resource files.
func readEventResources(files []string) ([]map[string]any, error) {
	var out []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--event-resource: %w", err)}
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var obj map[string]any
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--event-resource %s: %w", f, err)}
			}
			if len(obj) > 0 {
				out = append(out, obj)
			}
		}
	}
	return out, nil
}

// eventRequest is one event profile to render offline.
type eventRequest struct {
	fleet *spec.Repository
	tree  fs.FS
	f     *renderFlags
	p     *spec.Profile
	facts render.ClusterFacts
	objs  []map[string]any
}

// renderEventProfile renders one instance per event the resources make
// on the cluster, each under a comment naming it.
func renderEventProfile(ctx context.Context, r *render.Renderer, req eventRequest, stdout, stderr io.Writer) error {
	t := req.p.Spec.EventTrigger
	src := req.fleet.EventSource(t.EventSourceName)
	selected, err := events.Select(ctx, lua.NewRunner(lua.Options{}), src, req.objs, req.p.Tenant())
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("profile %s: event source %s: %w", req.p.Metadata.Name, src.Metadata.Name, err)}
	}
	insts := events.Instances(t.OneForEvent, []events.Matches{{Cluster: req.facts.Name, Objects: selected}})
	if len(insts) == 0 {
		fmt.Fprintf(stderr, "note: profile %s reacts to event source %s: no --event-resource makes an event, no instance rendered\n",
			req.p.Metadata.Name, src.Metadata.Name)
	}
	if len(insts) > t.Cap() {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("profile %s: %d event instances exceed the cap of %d (spec.eventTrigger.maxInstances)", req.p.Metadata.Name, len(insts), t.Cap())}
	}
	for _, in := range insts {
		ev := &render.EventData{Name: in.Name, SourceCluster: in.SourceCluster, Resource: in.Object, Resources: in.Resources}
		res, err := r.Render(ctx, render.Request{FS: req.tree, Revision: req.f.revision, Profile: req.p, Cluster: req.facts, Event: ev})
		if err != nil {
			return &ExitError{Code: ExitFailed, Err: fmt.Errorf("event instance %s (%s): %w", in.Name, in.Resource, err)}
		}
		fmt.Fprintf(stdout, "# event instance: %s (%s on %s)\n", in.Name, in.Resource, in.SourceCluster)
		if err := writeRendered(stdout, res, req.f.showSecrets); err != nil {
			return err
		}
	}
	return nil
}
