package testenv_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"
	discoveryclient "k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client for %s: %v", cfg.Host, err)
	}
	return cs
}

func discovery(t *testing.T, cfg *rest.Config) *discoveryclient.DiscoveryClient {
	t.Helper()
	cfg.Timeout = 5 * time.Second
	dc, err := discoveryclient.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatalf("discovery client for %s: %v", cfg.Host, err)
	}
	return dc
}

func serverVersion(t *testing.T, cfg *rest.Config) *version.Info {
	t.Helper()
	v, err := discovery(t, cfg).ServerVersion()
	if err != nil {
		t.Fatalf("server version of %s: %v", cfg.Host, err)
	}
	return v
}
