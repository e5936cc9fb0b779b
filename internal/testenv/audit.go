package testenv

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// auditPolicy logs every write at the Metadata level (who, what, when,
// the response code; no bodies), once the response is complete, and
// nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// AuditEvent is an entry of a cluster's audit log (the fields of
// audit.k8s.io/v1 Event that tests read).
type AuditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	// RequestURI tells dry runs (dryRun=All) from writes.
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
}

// auditFlags writes the audit policy into the cluster's folder and
// returns the flags that log to <folder>/audit.log.
func (c *Cluster) auditFlags() ([]string, error) {
	policy := filepath.Join(c.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + c.AuditLog(),
		"--audit-log-format=json",
		"--audit-log-mode=blocking", // logged before the response is sent
	}, nil
}

// AuditLog returns the path of the cluster's audit log (written with
// Options.AuditLog; it survives restarts of the API server and is
// removed with the environment).
func (c *Cluster) AuditLog() string { return filepath.Join(c.dir, "audit.log") }

// ReadAuditLog returns the events of an audit log, oldest first; a log
// not written yet has none.
func ReadAuditLog(path string) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// The last line may be half written while the server runs.
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return out, nil
}
