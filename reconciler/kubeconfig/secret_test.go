package kubeconfig

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestFromSecret(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secret := func(data, stringData map[string]any) map[string]any {
		m := map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "c1-kubeconfig", "namespace": "regatta-system"}}
		if data != nil {
			m["data"] = data
		}
		if stringData != nil {
			m["stringData"] = stringData
		}
		return m
	}
	cases := []struct {
		name    string
		secret  map[string]any
		key     string
		want    string
		wantErr string
	}{
		{"data value", secret(map[string]any{"value": b64("kc-a")}, nil), "", "kc-a", ""},
		{"value.yaml fallback", secret(map[string]any{"value.yaml": b64("kc-b")}, nil), "", "kc-b", ""},
		{"value before value.yaml", secret(map[string]any{"value": b64("kc-a"), "value.yaml": b64("kc-b")}, nil), "", "kc-a", ""},
		{"stringData wins", secret(map[string]any{"value": b64("kc-a")}, map[string]any{"value": "kc-s"}), "", "kc-s", ""},
		{"named key", secret(map[string]any{"config": b64("kc-c")}, nil), "config", "kc-c", ""},
		{"missing key", secret(map[string]any{"other": b64("s3cret")}, nil), "", "",
			"Secret regatta-system/c1-kubeconfig has no key value in data or stringData"},
		{"bad base64", secret(map[string]any{"value": "s3cret!!"}, nil), "", "",
			"Secret regatta-system/c1-kubeconfig: key value: data value is not valid base64"},
		{"not a secret", map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}, "", "", "kind is ConfigMap"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromSecret(tc.secret, tc.key)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error %v, want %q without the value", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
