package commitstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

const testToken = "s3cr3t-token"

// hostSpec is what a host's documentation says a status request is.
type hostSpec struct {
	provider string
	repo     string
	// path is the request's escaped path for a commit.
	path func(sha string) string
	// auth is the header and value the token travels in.
	authHeader, authValue string
	// fields names the JSON body's state, context, description and link.
	stateField, contextField, descField, urlField string
	// states maps our states to the host's words.
	states map[State]string
	// check checks the body's other fields.
	check func(body map[string]any) error
	// refuseSame answers 400 to a status that has the state it already
	// has, as GitLab does ("Cannot transition status via :run from
	// :running").
	refuseSame bool
}

var specs = []hostSpec{
	{
		// https://docs.github.com/en/rest/commits/statuses#create-a-commit-status
		// (GitHub Enterprise Server serves the same API under /api/v3).
		provider: ProviderGitHub, repo: "acme/fleet",
		path:       func(sha string) string { return "/api/v3/repos/acme/fleet/statuses/" + sha },
		authHeader: "Authorization", authValue: "Bearer " + testToken,
		stateField: "state", contextField: "context", descField: "description", urlField: "target_url",
		states: map[State]string{Pending: "pending", Success: "success", Failure: "failure"},
	},
	{
		// https://docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit
		provider: ProviderGitLab, repo: "platform/infra/fleet",
		path:       func(sha string) string { return "/api/v4/projects/platform%2Finfra%2Ffleet/statuses/" + sha },
		authHeader: "PRIVATE-TOKEN", authValue: testToken,
		stateField: "state", contextField: "name", descField: "description", urlField: "target_url",
		states:     map[State]string{Pending: "running", Success: "success", Failure: "failed"},
		refuseSame: true,
	},
	{
		// https://docs.gitea.com/api (repoCreateStatus); Forgejo's is the same.
		provider: ProviderGitea, repo: "acme/fleet",
		path:       func(sha string) string { return "/api/v1/repos/acme/fleet/statuses/" + sha },
		authHeader: "Authorization", authValue: "token " + testToken,
		stateField: "state", contextField: "context", descField: "description", urlField: "target_url",
		states: map[State]string{Pending: "pending", Success: "success", Failure: "failure"},
	},
	{
		// https://developer.atlassian.com/cloud/bitbucket/rest/api-group-commit-statuses/#api-repositories-workspace-repo-slug-commit-commit-statuses-build-post
		provider: ProviderBitbucket, repo: "acme/fleet",
		path:       func(sha string) string { return "/2.0/repositories/acme/fleet/commit/" + sha + "/statuses/build" },
		authHeader: "Authorization", authValue: "Bearer " + testToken,
		stateField: "state", contextField: "name", descField: "description", urlField: "url",
		states: map[State]string{Pending: "INPROGRESS", Success: "SUCCESSFUL", Failure: "FAILED"},
		check: func(body map[string]any) error {
			if body["key"] != body["name"] {
				return fmt.Errorf("key %v, want the context %v", body["key"], body["name"])
			}
			return nil
		},
	},
}

// received is one status the server accepted.
type received struct {
	sha string
	st  Status
}

// fakeHost is a loopback server that checks each request against a
// hostSpec and records the statuses it accepts; while down it answers 503.
type fakeHost struct {
	t        *testing.T
	spec     hostSpec
	srv      *httptest.Server
	down     atomic.Bool
	attempts atomic.Int64
	mu       sync.Mutex
	got      []received
	refused  int
}

func newFakeHost(t *testing.T, spec hostSpec) *fakeHost {
	f := &fakeHost{t: t, spec: spec}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeHost) serve(w http.ResponseWriter, r *http.Request) {
	f.attempts.Add(1)
	if f.down.Load() {
		http.Error(w, `{"message":"unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	rec, err := f.check(r)
	if err != nil {
		f.t.Errorf("%s: %s %s: %v", f.spec.provider, r.Method, r.URL.EscapedPath(), err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f.refuse(rec) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"message":"Cannot transition status via :run from :running (Reason(s): Status cannot transition via \"run\".)"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, `{"id": 1, "state": "`+f.spec.states[rec.st.State]+`"}`)
}

// refuse records rec, or refuses it when the host refuses a repeated
// state and rec's state is the one its context has.
func (f *fakeHost) refuse(rec received) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spec.refuseSame {
		for _, g := range slices.Backward(f.got) {
			if g.sha == rec.sha && g.st.Context == rec.st.Context {
				if g.st.State == rec.st.State {
					f.refused++
					return true
				}
				break
			}
		}
	}
	f.got = append(f.got, rec)
	return false
}

func (f *fakeHost) check(r *http.Request) (received, error) {
	if r.Method != http.MethodPost {
		return received{}, fmt.Errorf("method %s, want POST", r.Method)
	}
	if got := r.Header.Get(f.spec.authHeader); got != f.spec.authValue {
		return received{}, fmt.Errorf("%s header %q", f.spec.authHeader, got)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return received{}, fmt.Errorf("Content-Type %q", ct)
	}
	sha, ok := shaOf(r.URL.EscapedPath(), f.spec.path("{sha}"))
	if !ok {
		return received{}, fmt.Errorf("path is not %s", f.spec.path("{sha}"))
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return received{}, fmt.Errorf("body: %w", err)
	}
	return f.decode(sha, body)
}

func (f *fakeHost) decode(sha string, body map[string]any) (received, error) {
	if f.spec.check != nil {
		if err := f.spec.check(body); err != nil {
			return received{}, err
		}
	}
	rec := received{sha: sha, st: Status{
		Context:     str(body[f.spec.contextField]),
		Description: str(body[f.spec.descField]),
		TargetURL:   str(body[f.spec.urlField]),
	}}
	for s, word := range f.spec.states {
		if body[f.spec.stateField] == word {
			rec.st.State = s
		}
	}
	if rec.st.State == "" || rec.st.Context == "" {
		return received{}, fmt.Errorf("body %v: no known %s or no %s", body, f.spec.stateField, f.spec.contextField)
	}
	return rec, nil
}

// shaOf matches path against pattern and returns the 40-hex commit in
// place of {sha}.
func shaOf(path, pattern string) (string, bool) {
	pre, suf, _ := strings.Cut(pattern, "{sha}")
	sha, ok := strings.CutPrefix(path, pre)
	if sha, ok2 := strings.CutSuffix(sha, suf); ok && ok2 && len(sha) == 40 && strings.Trim(sha, "0123456789abcdef") == "" {
		return sha, true
	}
	return "", false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (f *fakeHost) received() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

// waitFor polls until the server accepted n statuses.
func (f *fakeHost) waitFor(n int) []received {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got := f.received(); len(got) >= n {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("%s: %d statuses accepted after 10s, want %d: %+v", f.spec.provider, len(f.received()), n, f.received())
	return nil
}

func (f *fakeHost) publisher(t *testing.T, log *slog.Logger) *Publisher {
	return f.publisherWith(t, PublisherOptions{Log: log})
}

// publisherWith runs a Publisher to f with o, fast backoffs and a link.
func (f *fakeHost) publisherWith(t *testing.T, o PublisherOptions) *Publisher {
	h, err := NewHost(Config{Provider: f.spec.provider, BaseURL: f.srv.URL, Repo: f.spec.repo, Token: testToken, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o.Compute.TargetURL = "https://git.example.com/acme/fleet/src/branch/regatta-status/status/README.md"
	o.MinBackoff, o.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	p := NewPublisher(h, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

var (
	pendingA = fleet(revA, cluster("a", revA, status.StateApplied, status.StateProgressing))
	successA = fleet(revA, cluster("a", revA, status.StateApplied, status.StateApplied))
	failureA = fleet(revA, cluster("a", revA, status.StateApplied, status.StateFailed))
	pendingB = fleet(revB, cluster("a", revA, status.StateApplied, status.StateApplied))
)

func wantStates(t *testing.T, got []received, want ...received) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d statuses, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.sha != w.sha || g.st.State != w.st.State || g.st.Context != DefaultContext || g.st.Description != w.st.Description ||
			!strings.HasPrefix(g.st.TargetURL, "https://git.example.com/") {
			t.Errorf("status %d: got %s %+v, want %s %s %q", i, g.sha[:7], g.st, w.sha[:7], w.st.State, w.st.Description)
		}
	}
}

func at(sha string, s State, desc string) received {
	return received{sha: sha, st: Status{State: s, Description: desc}}
}

func TestHosts(t *testing.T) {
	for _, spec := range specs {
		t.Run(spec.provider, func(t *testing.T) {
			t.Run("pending then success", func(t *testing.T) {
				f := newFakeHost(t, spec)
				p := f.publisher(t, nil)
				p.Observe(pendingA)
				f.waitFor(1)
				p.Observe(successA)
				wantStates(t, f.waitFor(2), at(revA, Pending, "1/2 pairs applied"), at(revA, Success, "2 pairs applied on 1 cluster"))
			})
			t.Run("pending then failure", func(t *testing.T) {
				f := newFakeHost(t, spec)
				p := f.publisher(t, nil)
				p.Observe(pendingA)
				f.waitFor(1)
				p.Observe(failureA)
				wantStates(t, f.waitFor(2), at(revA, Pending, "1/2 pairs applied"), at(revA, Failure, "1 failed: a/p1: Failed"))
			})
			t.Run("nothing resent unchanged", func(t *testing.T) {
				f := newFakeHost(t, spec)
				p := f.publisher(t, nil)
				p.Observe(successA)
				f.waitFor(1)
				p.Observe(successA)
				p.Observe(successA)
				p.Observe(pendingB) // queued after anything the two would have queued
				wantStates(t, f.waitFor(2), at(revA, Success, "2 pairs applied on 1 cluster"), at(revB, Pending, "0/2 pairs applied"))
			})
			t.Run("a restart sets the current status once again at most", func(t *testing.T) {
				f := newFakeHost(t, spec)
				f.publisher(t, nil).Observe(successA)
				f.waitFor(1)
				restarted := f.publisher(t, nil)
				restarted.Observe(successA)
				restarted.Observe(successA)
				restarted.Observe(pendingB) // queued after anything the three would have queued
				want := []received{at(revA, Success, "2 pairs applied on 1 cluster")}
				if !spec.refuseSame {
					want = append(want, want[0])
				}
				want = append(want, at(revB, Pending, "0/2 pairs applied"))
				wantStates(t, f.waitFor(len(want)), want...)
				if f.mu.Lock(); spec.refuseSame && f.refused != 1 {
					t.Errorf("%d statuses refused as already set, want 1", f.refused)
				}
				f.mu.Unlock()
			})
			t.Run("host down then back gets the newest status once", func(t *testing.T) {
				f := newFakeHost(t, spec)
				logs := &syncWriter{}
				p := f.publisher(t, slog.New(slog.NewTextHandler(logs, nil)))
				f.down.Store(true)
				start := time.Now()
				p.Observe(pendingA)
				p.Observe(successA)
				if d := time.Since(start); d > 100*time.Millisecond {
					t.Errorf("Observe waited %s for a host that is down", d)
				}
				deadline := time.Now().Add(10 * time.Second)
				for f.attempts.Load() < 3 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if f.attempts.Load() < 3 {
					t.Fatalf("%d attempts while down, want retries", f.attempts.Load())
				}
				f.down.Store(false)
				p.Observe(pendingB) // queued after revA's status
				wantStates(t, f.waitFor(2), at(revA, Success, "2 pairs applied on 1 cluster"), at(revB, Pending, "0/2 pairs applied"))
				if strings.Contains(logs.String(), testToken) {
					t.Error("the token reached the log")
				}
				if !strings.Contains(logs.String(), "commit status not set; retrying") {
					t.Errorf("the failure was not logged:\n%s", logs.String())
				}
			})
		})
	}
}

// syncWriter lets the Publisher's goroutine log into a test's buffer.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPublisherQueueBound: statuses wanted while the host is down wait in
// a bounded queue that keeps the newest.
func TestPublisherQueueBound(t *testing.T) {
	f := newFakeHost(t, specs[2])
	p := f.publisherWith(t, PublisherOptions{MaxQueue: 2})
	f.down.Store(true)
	shas := []string{"1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222",
		"3333333333333333333333333333333333333333", "4444444444444444444444444444444444444444", "5555555555555555555555555555555555555555"}
	for _, sha := range shas[:4] {
		p.Observe(fleet(sha, cluster("a", sha, status.StateApplied)))
	}
	// Two attempts begun after the Observes: none still carries a
	// dropped status.
	for n := f.attempts.Load() + 2; f.attempts.Load() < n; {
		time.Sleep(5 * time.Millisecond)
	}
	f.down.Store(false)
	f.waitFor(2)
	p.Observe(fleet(shas[4], cluster("a", shas[4], status.StateApplied)))
	got := f.waitFor(3)
	for i, sha := range shas[2:] {
		if got[i].sha != sha {
			t.Errorf("status %d on %s, want %s (the two newest, then the next)", i, got[i].sha[:7], sha[:7])
		}
	}
}
