package apply

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// eventLog records what an informer hands a handler.
type eventLog struct{ events []string }

func (l *eventLog) handler() cache.ResourceEventHandler {
	name := func(obj any) string {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			return d.Key + "(unknown)"
		}
		return obj.(*unstructured.Unstructured).GetName() + "@" + obj.(*unstructured.Unstructured).GetResourceVersion()
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			l.events = append(l.events, fmt.Sprintf("add %s initial=%v", name(obj), initial))
		},
		UpdateFunc: func(old, cur any) { l.events = append(l.events, "update "+name(old)+" "+name(cur)) },
		DeleteFunc: func(obj any) { l.events = append(l.events, "delete "+name(obj)) },
	}
}

func (l *eventLog) take() []string {
	out := l.events
	l.events = nil
	slices.Sort(out)
	return out
}

func obj(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// The informer's store hands each change to every handler once: the
// first list as initial additions, a relist as the difference (deleted
// objects as unknown final states), and to a handler added later every
// cached object first. Objects are stored transformed.
func TestInformerStore(t *testing.T) {
	transformed := 0
	inf := &Informer{handlers: map[*informerHandler]bool{}, items: map[string]any{},
		transform: func(o any) (any, error) { transformed++; return o, nil }}
	s := (*informerStore)(inf)
	early := &eventLog{}
	regEarly := inf.addHandler(early.handler())
	if inf.HasSynced() || regEarly.HasSynced() {
		t.Fatal("synced before the first list")
	}
	if err := s.Replace([]any{obj("a", "1"), obj("b", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	if !inf.HasSynced() || !regEarly.HasSynced() {
		t.Fatal("not synced after the first list")
	}
	want := []string{"add a@1 initial=true", "add b@1 initial=true"}
	if got := early.take(); !slices.Equal(got, want) {
		t.Errorf("first list: %v, want %v", got, want)
	}

	late := &eventLog{}
	if reg := inf.addHandler(late.handler()); !reg.HasSynced() {
		t.Error("a handler added after the list is not synced")
	}
	if got := late.take(); !slices.Equal(got, want) {
		t.Errorf("replay to a late handler: %v, want %v", got, want)
	}

	check := func(step string, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		for _, l := range []*eventLog{early, late} {
			if got := l.take(); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", step, got, want)
			}
		}
	}
	check("update", s.Update(obj("a", "2")), "update a@1 a@2")
	check("add", s.Add(obj("c", "3")), "add c@3 initial=false")
	check("delete", s.Delete(obj("b", "1")), "delete b@1")
	check("delete of an unknown object", s.Delete(obj("zz", "1")))
	check("relist", s.Replace([]any{obj("a", "2"), obj("d", "4")}, "4"),
		"add d@4 initial=false", "delete ns/c(unknown)", "update a@2 a@2")

	if keys := inf.ListKeys(); !slices.Equal(slices.Sorted(slices.Values(keys)), []string{"ns/a", "ns/d"}) {
		t.Errorf("keys %v", keys)
	}
	if o, ok := inf.GetByKey("ns/d"); !ok || !strings.HasSuffix(o.(*unstructured.Unstructured).GetName(), "d") {
		t.Errorf("GetByKey(ns/d) = %v, %v", o, ok)
	}
	if transformed != 6 {
		t.Errorf("transformed %d objects, want 6 (each stored one once)", transformed)
	}

	inf.removeHandler(regEarly)
	if err := s.Add(obj("e", "5")); err != nil {
		t.Fatal(err)
	}
	if got := early.take(); len(got) != 0 {
		t.Errorf("a removed handler got %v", got)
	}
}
