package cloud

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Endpoint is a cluster's API server: its https URL and its CA (PEM).
type Endpoint struct {
	Server string
	CAData []byte
}

// LookupError is a failed look-up of a cluster's endpoint in the cloud's
// management API: it names the cluster entry, the provider, the call, the
// cloud's cluster and what to grant or fix. Never a credential.
type LookupError struct {
	Provider string
	Cluster  string
	// Call is the API permission of the call (eks:DescribeCluster).
	Call string
	// Target is the cloud's cluster (its name or resource ID).
	Target string
	// Fix says what to grant or correct.
	Fix string
	Err error
}

func (e *LookupError) Error() string {
	msg := fmt.Sprintf("cluster %s: %s: %s on %s", e.Cluster, e.Provider, e.Call, e.Target)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func (e *LookupError) Unwrap() error { return e.Err }

// APIError is an error answer of a cloud's management API: the HTTP
// status and the code and message the cloud gave.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	code := e.Code
	if code == "" {
		code = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d): %s", code, e.Status, e.Message)
}

// doer sends HTTP requests (*http.Client, aws.HTTPClient).
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// maxAnswer bounds a management API's answer.
const maxAnswer = 4 << 20

// call sends req and decodes a 2xx JSON answer into out; another answer
// becomes an *APIError through apiError, which reads the cloud's error
// format from the response and its body.
func call(client doer, req *http.Request, out any, apiError func(*http.Response, []byte) *APIError) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return apiError(resp, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %w", err)
	}
	return nil
}

// newRequest is http.NewRequestWithContext with a JSON Accept header.
func newRequest(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err == nil {
		req.Header.Set("Accept", "application/json")
	}
	return req, err
}

// endpointOf checks what a management API answered: an https server (a
// bare host gets https://) and PEM certificates; the error says what is
// missing from the answer.
func endpointOf(server string, ca []byte) (Endpoint, error) {
	if server == "" {
		return Endpoint{}, fmt.Errorf("the answer names no API server endpoint (is the cluster still being created?)")
	}
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	if u, err := url.Parse(server); err != nil || u.Scheme != "https" || u.Host == "" {
		return Endpoint{}, fmt.Errorf("the answer's endpoint %q is not an https URL", server)
	}
	if block, _ := pem.Decode(ca); block == nil || block.Type != "CERTIFICATE" {
		return Endpoint{}, fmt.Errorf("the answer holds no PEM CA certificate")
	}
	return Endpoint{Server: server, CAData: ca}, nil
}

// firstOf returns the first non-empty string, trimmed and bounded (an error
// answer's text, which may be long).
func firstOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			if len(v) > 512 {
				v = v[:512] + "..."
			}
			return v
		}
	}
	return ""
}

// errorObject reads the error of Google APIs ({"error": {"code": 403,
// "status": "PERMISSION_DENIED", "message"}}) and of Azure Resource
// Manager ({"error": {"code": "AuthorizationFailed", "message"}}): the
// code is the status, else the code if a string.
func errorObject(resp *http.Response, body []byte) *APIError {
	var e struct {
		Error struct {
			Code    json.RawMessage `json:"code"`
			Status  string          `json:"status"`
			Message string          `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e) // not JSON: the body is the message
	code := e.Error.Status
	if code == "" {
		_ = json.Unmarshal(e.Error.Code, &code)
	}
	return &APIError{Status: resp.StatusCode, Code: code, Message: firstOf(e.Error.Message, string(body))}
}
