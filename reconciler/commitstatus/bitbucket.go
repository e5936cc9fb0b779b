package commitstatus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Bitbucket Cloud has no official Go client: bitbucketHost follows its
// documented REST API, POST
// /2.0/repositories/{workspace}/{repo_slug}/commit/{commit}/statuses/build
// with a JSON body {key, state, name, url, description} and a bearer token
// (a repository, project or workspace access token).
type bitbucketHost struct {
	c               *http.Client
	base            string
	token           string
	workspace, slug string
}

// DefaultBitbucketURL is Bitbucket Cloud's API address.
const DefaultBitbucketURL = "https://api.bitbucket.org"

func newBitbucket(c Config, workspace, slug string) (Host, error) {
	base := c.BaseURL
	if base == "" {
		base = DefaultBitbucketURL
	}
	if _, err := url.Parse(base); err != nil {
		return nil, fmt.Errorf("commit status bitbucket: address %q: %w", base, err)
	}
	return &bitbucketHost{c: c.httpClient(), base: strings.TrimSuffix(base, "/"), token: c.Token, workspace: workspace, slug: slug}, nil
}

var bitbucketStates = map[State]string{Pending: "INPROGRESS", Success: "SUCCESSFUL", Failure: "FAILED"}

// bitbucketStatus is the documented body of a build status.
type bitbucketStatus struct {
	Key         string `json:"key"`
	State       string `json:"state"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	Description string `json:"description"`
}

func (h *bitbucketHost) SetStatus(ctx context.Context, sha string, st Status) error {
	if err := h.post(ctx, sha, st); err != nil {
		return fmt.Errorf("bitbucket %s/%s: commit %s: %w", h.workspace, h.slug, sha, err)
	}
	return nil
}

func (h *bitbucketHost) post(ctx context.Context, sha string, st Status) error {
	if st.TargetURL == "" {
		return errors.New("bitbucket needs a link for each status (--commit-status-target-url)")
	}
	body, err := json.Marshal(bitbucketStatus{
		Key: bitbucketKey(st.Context), State: bitbucketStates[st.State], Name: st.Context, URL: st.TargetURL, Description: st.Description,
	})
	if err != nil {
		return err
	}
	u := fmt.Sprintf("%s/2.0/repositories/%s/%s/commit/%s/statuses/build",
		h.base, url.PathEscape(h.workspace), url.PathEscape(h.slug), url.PathEscape(sha))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := h.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// maxBitbucketKey bounds a status key, as Bitbucket Server's 40 characters
// do (Cloud documents no limit; a key that fits both is kept whole).
const maxBitbucketKey = 40

// bitbucketKey is the context, or for a longer one its head and a hash,
// so that distinct contexts keep distinct keys.
func bitbucketKey(context string) string {
	if len(context) <= maxBitbucketKey {
		return context
	}
	sum := sha256.Sum256([]byte(context))
	return context[:maxBitbucketKey-9] + "-" + hex.EncodeToString(sum[:4])
}
