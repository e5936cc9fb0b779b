package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// SoakStatus is what the soak saw of the status branch: the reads, and
// the records that went missing or back (a generation lower than one read
// before).
type SoakStatus struct {
	Reads   int      `json:"reads"`
	Missing int      `json:"missingRecords"`
	Back    int      `json:"recordsSetBack"`
	Notes   []string `json:"notes,omitempty"`
}

// statusWatch reads the status branch's cluster records and checks, over
// every read, that no record of a cluster in the fleet went missing and
// none went back.
type statusWatch struct {
	mu   sync.Mutex
	gen  map[string]int64
	seen SoakStatus
}

func newStatusWatch() *statusWatch { return &statusWatch{gen: map[string]int64{}} }

// read fetches the status branch and returns its cluster records by name.
func (sw *statusWatch) read(ctx context.Context, work string) (map[string]status.ClusterStatus, error) {
	if _, err := runGit(ctx, work, "fetch", "-q", "origin", statusBranch); err != nil {
		return nil, err
	}
	list, err := runGit(ctx, work, "ls-tree", "-r", "FETCH_HEAD", status.ClustersDir+"/")
	if err != nil {
		return nil, err
	}
	var blobs []string
	for line := range strings.Lines(list) {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "blob" {
			blobs = append(blobs, f[2])
		}
	}
	return readRecords(ctx, work, blobs)
}

// readRecords reads blobs (cluster records) through one git cat-file.
func readRecords(ctx context.Context, work string, blobs []string) (map[string]status.ClusterStatus, error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir, cmd.Stdin = work, strings.NewReader(strings.Join(blobs, "\n")+"\n")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	recs := map[string]status.ClusterStatus{}
	r := bufio.NewReader(bytes.NewReader(out))
	for range blobs {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file: %q", head)
		}
		n, _ := strconv.Atoi(f[2])
		body := make([]byte, n+1) // the content and its newline
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", f[0], err)
		}
		var cs status.ClusterStatus
		if err := yaml.Unmarshal(body[:n], &cs); err != nil {
			return nil, fmt.Errorf("status record %s: %w", f[0], err)
		}
		recs[cs.Cluster] = cs
	}
	return recs, nil
}

// check notes the records of clusters (the fleet's at the read) missing
// and those whose generation went back since an earlier read.
func (sw *statusWatch) check(recs map[string]status.ClusterStatus, clusters []string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.seen.Reads++
	for _, c := range clusters {
		rec, ok := recs[c]
		if !ok {
			if _, had := sw.gen[c]; had {
				sw.seen.Missing++
				sw.note(fmt.Sprintf("status/clusters/%s.yaml missing at read %d", c, sw.seen.Reads))
			}
			continue
		}
		if prev, had := sw.gen[c]; had && rec.Generation < prev {
			sw.seen.Back++
			sw.note(fmt.Sprintf("status/clusters/%s.yaml: generation %d after %d at read %d", c, rec.Generation, prev, sw.seen.Reads))
		}
		sw.gen[c] = max(sw.gen[c], rec.Generation)
	}
}

func (sw *statusWatch) note(s string) {
	if len(sw.seen.Notes) < 20 {
		sw.seen.Notes = append(sw.seen.Notes, s)
	}
}

// result is what the reads saw.
func (sw *statusWatch) result() SoakStatus {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	out := sw.seen
	out.Notes = append([]string(nil), sw.seen.Notes...)
	return out
}

// converged reports whether every cluster's record is at rev with each
// of profiles and every other profile it lists Applied, and how many are
// not.
func converged(recs map[string]status.ClusterStatus, clusters []string, rev string, profiles []string) (bool, int) {
	behind := 0
	for _, c := range clusters {
		rec, ok := recs[c]
		if !ok || rec.SourceRevision != rev || !hasProfiles(rec.Profiles, profiles) || !allApplied(rec.Profiles) {
			behind++
		}
	}
	return behind == 0, behind
}

func hasProfiles(ps []status.Profile, names []string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(ps, func(p status.Profile) bool { return p.Name == n }) {
			return false
		}
	}
	return true
}

func allApplied(ps []status.Profile) bool {
	for _, p := range ps {
		if p.State != status.StateApplied {
			return false
		}
	}
	return true
}

// waitRevision polls the status branch until every cluster's record
// carries rev with its profiles Applied, or within passes; each read is
// checked for records missing or set back. It returns the clusters still
// behind (0: converged).
func (sw *statusWatch) waitRevision(ctx context.Context, work string, clusters []string, rev string, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	behind := len(clusters)
	var lastErr error
	for {
		recs, err := sw.read(ctx, work)
		if err == nil {
			sw.check(recs, clusters)
			var ok bool
			if ok, behind = converged(recs, clusters, rev, FleetProfiles); ok {
				return 0, nil
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if lastErr != nil && behind == len(clusters) {
				return behind, lastErr
			}
			return behind, nil
		}
		_ = sleepCtx(ctx, 2*time.Second)
	}
}

// forget drops a cluster that left the fleet: a record it gets when it
// comes back starts afresh.
func (sw *statusWatch) forget(cluster string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	delete(sw.gen, cluster)
}
