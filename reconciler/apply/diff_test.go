package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestUnifiedDiffRedactsSecrets(t *testing.T) {
	sec := func(data map[string]any, applied string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "s", "namespace": "n", "resourceVersion": "7",
				"annotations": map[string]any{lastApplied: applied}},
			"data": data}}
		return u
	}
	live := sec(map[string]any{"same": "c2FtZQ==", "old": "b2xk", "gone": "Z29uZQ=="}, `{"data":{"old":"b2xk"}}`)
	merged := sec(map[string]any{"same": "c2FtZQ==", "old": "bmV3", "added": "YWRk"}, `{"data":{"old":"bmV3"}}`)
	d, err := unifiedDiff("Secret/n/s", live, merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-  gone: (redacted)", "+  added: (redacted, changed)", "-  old: (redacted)",
		"+  old: (redacted, changed)", "   same: (redacted)"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	for _, secret := range []string{"c2FtZQ==", "b2xk", "bmV3", "Z29uZQ==", "YWRk", "resourceVersion"} {
		if strings.Contains(d, secret) {
			t.Errorf("diff shows %q:\n%s", secret, d)
		}
	}
}
