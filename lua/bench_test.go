package lua

import (
	"context"
	"testing"
)

// BenchmarkHealthCached runs the built-in Certificate health script on one
// object: a fresh state per call, the compiled script from the cache.
func BenchmarkHealthCached(b *testing.B) {
	src, _ := BuiltinHealth("cert-manager.io", "Certificate")
	s := Script{Name: "cert-manager.io/Certificate/health.lua", Source: src}
	obj := map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web-tls", "namespace": "web", "generation": int64(1)},
		"spec":     map[string]any{"secretName": "web-tls", "dnsNames": []any{"web.example.com"}},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "message": "Certificate is up to date", "observedGeneration": int64(1),
		}}},
	}
	r := NewRunner(Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if hs, err := r.Health(ctx, s, obj); err != nil || hs.Status != Healthy {
			b.Fatal(hs, err)
		}
	}
}

// BenchmarkEvaluateObject runs a Sveltos-style per-object classification.
func BenchmarkEvaluateObject(b *testing.B) {
	s := Script{Name: "gpu.lua", Source: `
function evaluate()
  local hs = {matching = false}
  if getLabel(obj, "nvidia.com/gpu.present") == "true" and semver.gte(obj.status.nodeInfo.kubeletVersion, "v1.30.0") then
    hs.matching = true
    hs.message = obj.metadata.name .. " has a GPU"
  end
  return hs
end`}
	obj := nodes(1, 0)[0]
	obj["metadata"].(map[string]any)["labels"] = map[string]any{"nvidia.com/gpu.present": "true"}
	obj["status"].(map[string]any)["nodeInfo"] = map[string]any{"kubeletVersion": "v1.37.2"}
	r := NewRunner(Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if m, err := r.EvaluateObject(ctx, s, obj); err != nil || !m.Matching {
			b.Fatal(m, err)
		}
	}
}

// BenchmarkEvaluateAggregated counts Ready nodes over 100 Node objects.
func BenchmarkEvaluateAggregated(b *testing.B) {
	s := Script{Name: "size.lua", Source: readyNodes}
	list := nodes(60, 40)
	r := NewRunner(Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if m, err := r.EvaluateAggregated(ctx, s, list); err != nil || !m.Matching {
			b.Fatal(m, err)
		}
	}
}

// BenchmarkHealthUncached compiles the script on every call, for comparison.
func BenchmarkHealthUncached(b *testing.B) {
	src, _ := BuiltinHealth("apps", "DaemonSet")
	obj := map[string]any{"metadata": map[string]any{}, "spec": map[string]any{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r := NewRunner(Options{})
		if _, err := r.Health(ctx, Script{Name: "ds", Source: src}, obj); err != nil {
			b.Fatal(err)
		}
	}
}
