package apply

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// REST mappers shared by content
//
// A REST mapper built from a cluster's discovery (every group, version and
// resource the API server serves) costs about 0.2 MiB, and a fleet's
// clusters mostly run the same few API server versions with the same
// add-ons: clusters whose discovery answers are equal share one mapper.
// Each cluster's mapper (clusterMapper) still reads its own discovery, on
// first use and whenever a kind is not found (a CRD installed since), and
// then uses the shared mapper built from exactly that answer: a cluster
// never maps a kind through another cluster's discovery.

// MapperCache holds the REST mappers of the clients built with it, one per
// distinct discovery answer, for as long as a client uses it. Safe for
// concurrent use.
type MapperCache struct {
	mu      sync.Mutex
	mappers map[[sha256.Size]byte]weak.Pointer[sharedMapper]
}

// NewMapperCache returns an empty cache.
func NewMapperCache() *MapperCache {
	return &MapperCache{mappers: map[[sha256.Size]byte]weak.Pointer[sharedMapper]{}}
}

// sharedMapper is the read-only mapper of one discovery answer. It keeps
// the mappings it found: every object of every pass asks for one, and
// client-go's priority mapper builds each answer anew (about 1.3 KiB of
// allocations, a not-found error per group it tries first).
type sharedMapper struct {
	meta.RESTMapper
	mappings sync.Map // mappingKey → *meta.RESTMapping
}

// RESTMapping returns a copy of the kept mapping of gk and versions, found
// on the first call.
func (s *sharedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	if m, ok := s.mappings.Load(key); ok {
		cp := *m.(*meta.RESTMapping)
		return &cp, nil
	}
	m, err := s.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	cp := *m
	s.mappings.Store(key, &cp)
	return m, nil
}

type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

// get returns the mapper of a discovery answer, built once per content.
func (mc *MapperCache) get(groups []*restmapper.APIGroupResources) (*sharedMapper, error) {
	raw, err := json.Marshal(groups) // map keys sorted: equal answers encode equally
	if err != nil {
		return nil, fmt.Errorf("rest mapper: encode discovery: %w", err)
	}
	key := sha256.Sum256(raw)
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if m := mc.mappers[key].Value(); m != nil {
		return m, nil
	}
	m := &sharedMapper{RESTMapper: restmapper.NewDiscoveryRESTMapper(groups)}
	mc.mappers[key] = weak.Make(m)
	runtime.AddCleanup(m, mc.forget, key)
	return m, nil
}

// forget drops the entry of a mapper no client uses any more.
func (mc *MapperCache) forget(key [sha256.Size]byte) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.mappers[key].Value() == nil {
		delete(mc.mappers, key)
	}
}

// Len returns how many distinct mappers are held.
func (mc *MapperCache) Len() int {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	n := 0
	for _, p := range mc.mappers {
		if p.Value() != nil {
			n++
		}
	}
	return n
}

// clusterMapper is one cluster's REST mapper: the shared mapper of its
// last discovery answer, read again when a kind or version is not found.
type clusterMapper struct {
	disco discovery.DiscoveryInterface
	cache *MapperCache
	// refreshMu serializes discovery reads; state is replaced under it.
	refreshMu sync.Mutex
	state     atomic.Pointer[mapperState]
}

// mapperState is a cluster's mapper after one discovery read.
type mapperState struct {
	mapper *sharedMapper
	// failed are the group versions whose discovery failed in that read
	// (an aggregated API server down): their kinds are unknown, not gone.
	failed map[schema.GroupVersion]error
	gen    uint64
}

func newClusterMapper(disco discovery.DiscoveryInterface, cache *MapperCache) *clusterMapper {
	if cache == nil {
		cache = NewMapperCache()
	}
	return &clusterMapper{disco: disco, cache: cache}
}

// current returns the mapper state, reading discovery on first use.
func (m *clusterMapper) current() (*mapperState, error) {
	if s := m.state.Load(); s != nil {
		return s, nil
	}
	if err := m.refresh(0); err != nil {
		return nil, err
	}
	return m.state.Load(), nil
}

// refresh reads discovery again unless another caller did since the
// state of generation seen (0: none yet).
func (m *clusterMapper) refresh(seen uint64) error {
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	var gen uint64
	if s := m.state.Load(); s != nil {
		if s.gen != seen {
			return nil
		}
		gen = s.gen
	}
	groups, failed, err := discoverGroups(m.disco)
	if err != nil {
		return err
	}
	shared, err := m.cache.get(groups)
	if err != nil {
		return err
	}
	m.state.Store(&mapperState{mapper: shared, failed: failed, gen: gen + 1})
	return nil
}

// discoverGroups reads the cluster's discovery, keeping what a REST
// mapper reads of it (the mapper depends on nothing else, so equal
// results may share one). A partial answer (some group versions failed)
// is returned with the failed ones.
func discoverGroups(d discovery.DiscoveryInterface) ([]*restmapper.APIGroupResources, map[schema.GroupVersion]error, error) {
	groups, lists, err := d.ServerGroupsAndResources()
	var partial *discovery.ErrGroupDiscoveryFailed
	if err != nil && (!errors.As(err, &partial) || groups == nil || lists == nil) {
		return nil, nil, fmt.Errorf("rest mapper: discovery: %w", err)
	}
	byGV := make(map[string][]metav1.APIResource, len(lists))
	for _, l := range lists {
		byGV[l.GroupVersion] = l.APIResources
	}
	out := make([]*restmapper.APIGroupResources, 0, len(groups))
	for _, g := range groups {
		gr := &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: g.Name,
			PreferredVersion: metav1.GroupVersionForDiscovery{Version: g.PreferredVersion.Version}},
			VersionedResources: map[string][]metav1.APIResource{}}
		for _, v := range g.Versions {
			gr.Group.Versions = append(gr.Group.Versions, metav1.GroupVersionForDiscovery{Version: v.Version})
			if rs, ok := byGV[v.GroupVersion]; ok {
				gr.VersionedResources[v.Version] = mappedResources(rs)
			}
		}
		out = append(out, gr)
	}
	if partial != nil {
		return out, partial.Groups, nil
	}
	return out, nil, nil
}

// mappedResources keeps the fields of resources a REST mapper reads.
func mappedResources(rs []metav1.APIResource) []metav1.APIResource {
	out := make([]metav1.APIResource, 0, len(rs))
	for _, r := range rs {
		out = append(out, metav1.APIResource{Name: r.Name, SingularName: r.SingularName, Namespaced: r.Namespaced, Kind: r.Kind})
	}
	return out
}

// lookup asks the cluster's mapper, reading discovery again once when the
// group, kind or version is not found. A group whose discovery failed is
// an error, never "not found": callers take that as gone.
func lookup[T any](m *clusterMapper, group string, ask func(meta.RESTMapper) (T, error)) (T, error) {
	var zero T
	s, err := m.current()
	if err != nil {
		return zero, err
	}
	v, err := ask(s.mapper)
	if !meta.IsNoMatchError(err) {
		return v, err
	}
	if err := m.refresh(s.gen); err != nil {
		return zero, err
	}
	s = m.state.Load()
	v, err = ask(s.mapper)
	if meta.IsNoMatchError(err) {
		if failed := s.failedIn(group); failed != nil {
			return zero, failed
		}
	}
	return v, err
}

// failedIn returns the discovery failure of a group, nil when none.
func (s *mapperState) failedIn(group string) error {
	groups := map[schema.GroupVersion]error{}
	for gv, err := range s.failed {
		if gv.Group == group {
			groups[gv] = err
		}
	}
	if len(groups) == 0 {
		return nil
	}
	return fmt.Errorf("rest mapper: %w", &discovery.ErrGroupDiscoveryFailed{Groups: groups})
}

func (m *clusterMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return lookup(m, r.Group, func(rm meta.RESTMapper) (schema.GroupVersionKind, error) { return rm.KindFor(r) })
}

func (m *clusterMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return lookup(m, r.Group, func(rm meta.RESTMapper) ([]schema.GroupVersionKind, error) { return rm.KindsFor(r) })
}

func (m *clusterMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return lookup(m, r.Group, func(rm meta.RESTMapper) (schema.GroupVersionResource, error) { return rm.ResourceFor(r) })
}

func (m *clusterMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return lookup(m, r.Group, func(rm meta.RESTMapper) ([]schema.GroupVersionResource, error) { return rm.ResourcesFor(r) })
}

func (m *clusterMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return lookup(m, gk.Group, func(rm meta.RESTMapper) (*meta.RESTMapping, error) { return rm.RESTMapping(gk, versions...) })
}

func (m *clusterMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return lookup(m, gk.Group, func(rm meta.RESTMapper) ([]*meta.RESTMapping, error) { return rm.RESTMappings(gk, versions...) })
}

func (m *clusterMapper) ResourceSingularizer(resource string) (string, error) {
	s, err := m.current()
	if err != nil {
		return "", err
	}
	return s.mapper.ResourceSingularizer(resource)
}
