package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// listWatch lists and watches one resource of a cluster (in a namespace,
// or across them; narrowed by selectors) for an Informer. Its watch reads
// the server's event stream on the caller's goroutine: client-go's watch
// decodes on a goroutine of its own and its Reflector adds a resync
// goroutine, two of the four goroutines a watch costs there. A fleet
// daemon holds one watch per kind and cluster: half the goroutines count.
type listWatch struct {
	list dynamic.ResourceInterface
	// rest requests the raw watch stream; path is the resource's
	// collection URL.
	rest          rest.Interface
	path          []string
	labelSelector string
	fieldSelector string
}

// listPageSize bounds one page of a list; listTimeout one whole list.
const (
	listPageSize = 500
	listTimeout  = time.Minute
	// minWatchTimeout is the shortest a watch asks the server to keep it
	// open (up to twice as long, at random, as client-go's Reflector does,
	// so that a fleet's watches do not all end at once).
	minWatchTimeout = 5 * time.Minute
)

// newListWatch lists gvr's objects in ns (all namespaces if empty) with
// list and watches them with rc.
func newListWatch(list dynamic.Interface, rc rest.Interface, gvr schema.GroupVersionResource, ns, labels, fields string) listWatch {
	return listWatch{
		list:          list.Resource(gvr).Namespace(ns),
		rest:          rc,
		path:          collectionPath(gvr, ns),
		labelSelector: labels,
		fieldSelector: fields,
	}
}

// collectionPath is the URL path of a resource's objects (in namespace ns
// when set).
func collectionPath(gvr schema.GroupVersionResource, ns string) []string {
	p := []string{"/api", gvr.Version}
	if gvr.Group != "" {
		p = []string{"/apis", gvr.Group, gvr.Version}
	}
	if ns != "" {
		p = append(p, "namespaces", ns)
	}
	return append(p, gvr.Resource)
}

// listAll lists every object, page by page, and returns them with the
// list's resourceVersion (where a watch starts). An expired continuation
// is an error the caller answers with a fresh list.
func (lw listWatch) listAll(ctx context.Context) ([]unstructured.Unstructured, string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	opts := metav1.ListOptions{LabelSelector: lw.labelSelector, FieldSelector: lw.fieldSelector, Limit: listPageSize}
	var items []unstructured.Unstructured
	rv := ""
	for {
		l, err := lw.list.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		if rv == "" {
			rv = l.GetResourceVersion() // every page is of the first one's snapshot
		}
		items = append(items, l.Items...)
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return items, rv, nil
		}
	}
}

// watchEvent is one frame of a watch stream.
type watchEvent struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watch streams the changes after resourceVersion rv to on, in order,
// until the server ends the watch (nil), ctx ends (nil) or it fails; it
// returns the resourceVersion to resume from (bookmarks advance it). The
// server's ERROR events, 410 Gone among them, are returned as API errors.
func (lw listWatch) watch(ctx context.Context, rv string, on func(watch.EventType, *unstructured.Unstructured) error) (string, error) {
	timeout := minWatchTimeout + rand.N(minWatchTimeout)
	req := lw.rest.Get().AbsPath(lw.path...).SetHeader("Accept", "application/json").
		Param("watch", "true").Param("allowWatchBookmarks", "true").Param("resourceVersion", rv).
		Param("timeoutSeconds", strconv.Itoa(int(timeout.Seconds())))
	if lw.labelSelector != "" {
		req = req.Param("labelSelector", lw.labelSelector)
	}
	if lw.fieldSelector != "" {
		req = req.Param("fieldSelector", lw.fieldSelector)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return rv, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return rv, nil
			}
			return rv, fmt.Errorf("watch %s: %w", lw.pathString(), err)
		}
		next, err := lw.event(ev, on)
		if err != nil {
			return rv, err
		}
		if next != "" {
			rv = next
		}
	}
}

// event hands one event to on and returns its resourceVersion.
func (lw listWatch) event(ev watchEvent, on func(watch.EventType, *unstructured.Unstructured) error) (string, error) {
	switch ev.Type {
	case watch.Error:
		var st metav1.Status
		if err := json.Unmarshal(ev.Object, &st); err != nil {
			return "", fmt.Errorf("watch %s: error event: %w", lw.pathString(), err)
		}
		return "", &apierrors.StatusError{ErrStatus: st}
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(ev.Object); err != nil {
			return "", fmt.Errorf("watch %s: %s event: %w", lw.pathString(), ev.Type, err)
		}
		if ev.Type != watch.Bookmark {
			if err := on(ev.Type, u); err != nil {
				return "", err
			}
		}
		return u.GetResourceVersion(), nil
	}
	return "", nil // an event type of a later API: skipped
}

func (lw listWatch) pathString() string { return path.Join(lw.path...) }
