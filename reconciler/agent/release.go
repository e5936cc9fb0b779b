package agent

import (
	"bytes"
	"context"
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// ReleasedBy marks a release recorded by hand (Handover.By).
const ReleasedBy = "regatta release-agent"

// ReleaseResult is what Release did.
type ReleaseResult struct {
	// Turn is the turn in force after the call; Released says whether
	// Release recorded it (false: the central daemon held the turn
	// already, nothing was written).
	Turn     int64
	Released bool
	// Commit is the agent's ref after the release.
	Commit string
}

// Release records, on a cluster's agent's ref, the release of an agent
// that is gone for good (`regatta release-agent`): the turn after the one
// in force, as the agent would record it after its last pass, so that the
// central daemon takes a cluster switched back to push. It writes only
// when the agent holds the turn, and not at all when the agent's ref
// moved since it was read (an agent that is alive releases on its own).
func Release(ctx context.Context, src *repo.Source, cluster, centralBranch string, author repo.Signature) (ReleaseResult, error) {
	r, err := readRelease(ctx, src, cluster, centralBranch)
	if err != nil {
		return ReleaseResult{}, err
	}
	if !Agent.holds(r.turn) {
		return ReleaseResult{Turn: r.turn}, nil
	}
	return r.write(ctx, src, author)
}

// releaseRead is what Release read: the followed branch's head, the
// cluster's record on its agent's ref with the turn in it (read), and the
// turn in force.
type releaseRead struct {
	head       string
	rec        status.ClusterStatus
	read, turn int64
}

func readRelease(ctx context.Context, src *repo.Source, cluster, centralBranch string) (releaseRead, error) {
	head, _, err := src.Sync(ctx)
	if err != nil {
		return releaseRead{}, err
	}
	refs := &Refs{Source: src, StatusBranch: centralBranch}
	central, err := refs.Turns(ctx, false, []string{cluster})
	if err != nil {
		return releaseRead{}, err
	}
	rec, err := refs.own(ctx, cluster)
	if err != nil {
		return releaseRead{}, err
	}
	r := releaseRead{head: head, rec: rec}
	if rec.Handover != nil {
		r.read = rec.Handover.Turn
	}
	r.turn = max(r.read, central[cluster].Turn)
	return r, nil
}

// write records the turn after r.turn on the agent's ref, unless the ref's
// record no longer holds the turn r read.
func (r releaseRead) write(ctx context.Context, src *repo.Source, author repo.Signature) (ReleaseResult, error) {
	rec, read, turn, head, cluster := r.rec, r.read, r.turn, r.head, r.rec.Cluster
	rec.Handover = &status.Handover{Turn: turn + 1, Revision: head, By: ReleasedBy}
	rec.Error = fmt.Sprintf("released by hand (%s, turn %d): the agent is taken for gone; the central daemon writes to the cluster while cluster.yaml says spec.mode: push", ReleasedBy, turn+1)
	files, err := status.Files(status.Snapshot{Clusters: []status.ClusterStatus{rec}})
	if err != nil {
		return ReleaseResult{}, err
	}
	file := status.ClusterFile(cluster)
	moved := false
	out, err := src.CommitAndPush(ctx, repo.CommitRequest{
		Branch: StatusRef(cluster), Prefix: status.Dir, Files: map[string][]byte{file: files[file]}, Author: author,
		Message: fmt.Sprintf("%s: cluster %s handed to the central daemon (turn %d)", ReleasedBy, cluster, turn+1),
		Rewrite: func(_ string, parent []byte, found bool, proposed []byte) ([]byte, bool) {
			if turnOf(parent, found) != read {
				moved = true
				return nil, false
			}
			return status.NextRecord(parent, found, proposed)
		},
	})
	switch {
	case err != nil:
		return ReleaseResult{}, err
	case moved:
		return ReleaseResult{}, fmt.Errorf("%s moved while it was read: its agent is alive, and releases the cluster on its own once it sees spec.mode: push", StatusRef(cluster))
	}
	return ReleaseResult{Turn: turn + 1, Released: true, Commit: out.SHA}, nil
}

// own reads the cluster's record on its agent's ref; a new one when the
// ref or record does not exist.
func (r *Refs) own(ctx context.Context, cluster string) (status.ClusterStatus, error) {
	revs, err := r.Source.FetchBranches(ctx, []string{StatusRef(cluster)})
	if err != nil {
		return status.ClusterStatus{}, err
	}
	rec := status.ClusterStatus{Cluster: cluster}
	if rev := revs[StatusRef(cluster)]; rev != "" {
		tree, err := r.Source.Tree(ctx, rev)
		if err != nil {
			return rec, fmt.Errorf("%s: %w", StatusRef(cluster), err)
		}
		got, ok, _, err := Record(tree, cluster)
		if err != nil {
			return rec, fmt.Errorf("%s: %w", StatusRef(cluster), err)
		}
		if ok {
			rec = got
		}
	}
	return rec, nil
}

// turnOf is the turn of a record file; 0 without one.
func turnOf(b []byte, found bool) int64 {
	var rec status.ClusterStatus
	if !found || yaml.NewDecoder(bytes.NewReader(b)).Decode(&rec) != nil || rec.Handover == nil {
		return 0
	}
	return rec.Handover.Turn
}
