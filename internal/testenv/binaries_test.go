package testenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApiserverBinaryResolvesVersions(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kube-apiserver-v1.36.3", "kube-apiserver-v1.36.10", "kube-apiserver-v1.37.2"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Not executable, or not a finished build: never picked.
	_ = os.WriteFile(filepath.Join(dir, "kube-apiserver-v1.36.99"), nil, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "kube-apiserver-v1.36.11.tmp.42"), nil, 0o755)

	b := binaries{dir: dir}
	for version, want := range map[string]string{
		"v1.36.3": "v1.36.3", "1.36.3": "v1.36.3", "v1.36": "v1.36.10", "": "v1.37.2", "v1.37": "v1.37.2",
	} {
		path, exact, err := b.apiserver(version)
		if err != nil || exact != want || filepath.Base(path) != "kube-apiserver-"+want {
			t.Errorf("apiserver(%q) = %s, %s, %v; want %s", version, path, exact, err, want)
		}
	}
	for _, version := range []string{"v1.35", "v1.36.4", "v1.36.99"} {
		if _, _, err := b.apiserver(version); !isMissing(err) {
			t.Errorf("apiserver(%q): got %v, want a MissingError", version, err)
		}
	}
}

func TestStartFailsWithSetupHintWhenBinariesAreMissing(t *testing.T) {
	for name, opts := range map[string]Options{
		"no kube-apiserver": {BinDir: t.TempDir(), EtcdBinary: "/bin/true"},
		"no etcd":           {BinDir: t.TempDir(), EtcdBinary: filepath.Join(t.TempDir(), "etcd")},
	} {
		t.Run(name, func(t *testing.T) {
			opts.Clusters = []ClusterOptions{{Name: "a"}}
			_, err := Start(context.Background(), opts)
			if !isMissing(err) || !strings.Contains(err.Error(), "hack/setup-test-env.sh") {
				t.Errorf("got %v, want a MissingError that points at hack/setup-test-env.sh", err)
			}
		})
	}
}

func TestControllersNeedTheirBinaries(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kube-apiserver-v1.37.2", "kube-controller-manager-v1.37.2", "kube-scheduler-v1.37.2", "kube-apiserver-v1.36.3"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := binaries{dir: dir}
	if err := b.check(ClusterOptions{Name: "bare"}); err != nil {
		t.Errorf("a bare cluster needs only kube-apiserver: %v", err)
	}
	err := b.check(ClusterOptions{Name: "ctl", Controllers: &Controllers{}})
	if !isMissing(err) || !strings.Contains(err.Error(), "kwok") {
		t.Errorf("a cluster with Controllers and no kwok: got %v, want a MissingError naming kwok", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kwok"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.check(ClusterOptions{Name: "ctl", Version: "v1.37", Controllers: &Controllers{}}); err != nil {
		t.Errorf("a v1.37 cluster with Controllers and every binary: %v", err)
	}
	// The controllers of another version are stamped for it: v1.37's are no
	// substitute.
	err = b.check(ClusterOptions{Name: "old", Version: "v1.36", Controllers: &Controllers{}})
	if !isMissing(err) || !strings.Contains(err.Error(), "kube-controller-manager-v1.36.3") ||
		!strings.Contains(err.Error(), "CONTROL_PLANE_VERSIONS=v1.36.3") {
		t.Errorf("a v1.36 cluster with only v1.37 controllers: got %v, want a MissingError naming kube-controller-manager-v1.36.3 and how to build it", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for name, clusters := range map[string][]ClusterOptions{
		"none":          nil,
		"empty":         {{Name: ""}},
		"not label":     {{Name: "Prod_1"}},
		"duplicate":     {{Name: "a"}, {Name: "a"}},
		"bad cpu":       {{Name: "a", Controllers: &Controllers{NodeCPU: "four"}}},
		"negative pods": {{Name: "a", Controllers: &Controllers{NodePods: -1}}},
	} {
		if err := (Options{Clusters: clusters}).validate(); err == nil {
			t.Errorf("%s: validate() = nil, want an error", name)
		}
	}
}

func isMissing(err error) bool {
	var missing *MissingError
	return errors.As(err, &missing)
}
