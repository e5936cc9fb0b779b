package apply

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestWatchClientsBuiltOnFirstUse: a new client holds no watch client
// until something watches; then both are built once and kept.
func TestWatchClientsBuiltOnFirstUse(t *testing.T) {
	c, err := NewClientForConfig("c1", &rest.Config{Host: "https://127.0.0.1:1"}, DefaultClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c.watches.list != nil || c.watches.raw != nil || c.watches.build == nil {
		t.Fatal("watch clients built with the client")
	}
	list, raw, err := c.watches.get()
	if err != nil || list == nil || raw == nil {
		t.Fatalf("get: %v, %v, %v", list, raw, err)
	}
	list2, raw2, _ := c.informers.clients.get()
	if list2 != list || raw2 != raw {
		t.Error("a second use built the watch clients again")
	}
	var none *watchClients
	if _, _, err := none.get(); err == nil {
		t.Error("a client without watch clients watched")
	}
}
