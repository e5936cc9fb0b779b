package status

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Files renders a snapshot as the status tree: path -> content. The output
// is deterministic, so equal snapshots give byte-equal files. Every text a
// profile controls is cut to MaxText in the records and escaped on the
// dashboards.
func Files(s Snapshot) (map[string][]byte, error) { return FilesWith(nil, s) }

// FilesWith is Files with the cluster records encoded by enc, which
// marshals only those that changed since its last call (nil: all of
// them). The output is byte-equal to Files'; the records' bytes may be
// shared with enc's other calls and must not be modified.
func FilesWith(enc *RecordEncoder, s Snapshot) (map[string][]byte, error) {
	s.Fleet = boundFleet(s.Fleet)
	s.Fleet.APIVersion, s.Fleet.Kind = APIVersion, KindFleetStatus
	b, err := marshal(s.Fleet)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", FleetFile, err)
	}
	files := map[string][]byte{FleetFile: b}
	s.Clusters = sortedClusters(s.Clusters)
	if err := addRecords(files, enc, s.Clusters); err != nil {
		return nil, err
	}
	files[Dashboard] = []byte(RenderDashboard(s))
	for name, page := range TenantPages(s) {
		files[TenantFile(name)] = page
	}
	return files, nil
}

// addRecords stamps the cluster records (sorted and bounded) with their
// apiVersion and kind and adds their files, encoded by enc.
func addRecords(files map[string][]byte, enc *RecordEncoder, clusters []ClusterStatus) error {
	for i := range clusters {
		clusters[i].APIVersion, clusters[i].Kind = APIVersion, KindClusterStatus
	}
	records, err := enc.Encode(clusters)
	if err != nil {
		return err
	}
	for i, c := range clusters {
		files[ClusterFile(c.Cluster)] = records[i]
	}
	return nil
}

// ClusterFile is the status file of one cluster.
func ClusterFile(name string) string { return path.Join(ClustersDir, name+".yaml") }

func sortedClusters(cs []ClusterStatus) []ClusterStatus {
	out := append([]ClusterStatus(nil), cs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	for i := range out {
		out[i] = boundCluster(out[i])
		ps := append([]Profile(nil), out[i].Profiles...)
		sort.Slice(ps, func(a, b int) bool { return ps[a].Name < ps[b].Name })
		out[i].Profiles = ps
	}
	return out
}

// Read loads a snapshot from a status tree (for example the status branch
// at a revision). A tree without status files gives an empty snapshot.
func Read(fsys fs.FS) (Snapshot, error) {
	var s Snapshot
	if b, err := fs.ReadFile(fsys, FleetFile); err == nil {
		if err := yaml.Unmarshal(b, &s.Fleet); err != nil {
			return s, fmt.Errorf("%s: %w", FleetFile, err)
		}
	}
	entries, err := fs.ReadDir(fsys, ClustersDir)
	if err != nil {
		return s, nil
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		var c ClusterStatus
		file := path.Join(ClustersDir, e.Name())
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			return s, err
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			return s, fmt.Errorf("%s: %w", file, err)
		}
		s.Clusters = append(s.Clusters, c)
	}
	return s, nil
}

// marshal writes YAML in field order with two-space indentation, the way
// people write it by hand.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
