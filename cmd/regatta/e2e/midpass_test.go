package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// midPass watches the ConfigMaps in namespace of each cluster (clients)
// for a pass applying version, of a profile whose first add-on holds
// bulk-N ConfigMaps and whose last add-on a ConfigMap named probe, and
// calls act once, from the goroutine that saw it, at the first bulk
// ConfigMap written at version on a cluster whose probe is not at version
// yet: the pass is then in flight. A watch sees a cluster's writes in the
// order its API server made them, so it cannot miss a short pass as
// polling can on a busy machine. Start it before the commit of version;
// the function it returns waits until act was called.
func midPass(t *testing.T, clients []kubernetes.Interface, namespace, version string, act func()) (wait func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	rvs := make([]string, len(clients))
	for i, c := range clients {
		list, err := c.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		rvs[i] = list.ResourceVersion
	}
	var once sync.Once
	errs := make(chan error, len(clients))
	for i, c := range clients {
		go func() {
			errs <- watchForMidPass(ctx, c, namespace, rvs[i], version, func() {
				once.Do(func() {
					act()
					cancel() // the other clusters' watches
				})
			})
		}()
	}
	return func() {
		t.Helper()
		var all []error
		for range clients {
			if err := <-errs; err == nil {
				cancel()
				return
			} else {
				all = append(all, err)
			}
		}
		t.Fatalf("no pass applying %s was seen mid-way: %v", version, errors.Join(all...))
	}
}

// watchForMidPass calls stop at the first bulk ConfigMap event at version
// after resourceVersion, and fails if the probe reaches version first.
func watchForMidPass(ctx context.Context, c kubernetes.Interface, namespace, resourceVersion, version string, stop func()) error {
	for ctx.Err() == nil {
		w, err := c.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
		if err != nil {
			continue // a blip: watch again from where we were
		}
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			resourceVersion = cm.ResourceVersion
			switch {
			case cm.Data["version"] != version:
			case strings.HasPrefix(cm.Name, "bulk-"):
				stop()
				w.Stop()
				return nil
			case cm.Name == "probe":
				w.Stop()
				return fmt.Errorf("the probe reached %s before any bulk ConfigMap", version)
			}
		}
	}
	return ctx.Err()
}
