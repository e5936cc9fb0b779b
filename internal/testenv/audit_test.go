package testenv_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestAuditLogRecordsWritesWithUserAgent: with AuditLog, a write shows in
// the cluster's audit log with its user agent; a read does not.
func TestAuditLogRecordsWritesWithUserAgent(t *testing.T) {
	e := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "audited"}}, AuditLog: true})
	c := e.Cluster("audited")
	cfg := c.RESTConfig()
	cfg.UserAgent = "audit-test/writer"
	cs := clientset(t, cfg)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited", Namespace: "default"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "audited", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	events, err := testenv.ReadAuditLog(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	var writes, reads int
	for _, ev := range events {
		if ev.UserAgent != "audit-test/writer" || ev.ObjectRef.Name != "audited" {
			continue
		}
		switch ev.Verb {
		case "create":
			writes++
			if ev.ObjectRef.Resource != "configmaps" || ev.ResponseStatus.Code != 201 || ev.Stage != "ResponseComplete" {
				t.Errorf("create logged as %+v", ev)
			}
		case "get":
			reads++
		}
	}
	if writes != 1 || reads != 0 {
		t.Errorf("audit log has %d creates and %d gets of the ConfigMap, want 1 and 0 (of %d events)", writes, reads, len(events))
	}
}
