package bench

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// benchKinds are the kinds of a profile's objects besides its Namespace.
var benchKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "serviceaccounts"}, {Version: "v1", Resource: "secrets"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// Verify checks that a cluster holds every object of a fleet: a Namespace
// and 29 objects for each profile. It lists each kind once.
func Verify(ctx context.Context, cfg *rest.Config, f Fleet) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	count := map[string]int{}
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=bench"}
	for _, gvr := range benchKinds {
		list, err := dyn.Resource(gvr).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, it := range list.Items {
			count[it.GetNamespace()]++
		}
	}
	nss, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ns := range nss.Items {
		count[ns.GetName()]++
	}
	var missing []string
	for i := range f.Profiles {
		ns := f.Namespace(ProfileName(i))
		if count[ns] != ObjectsPerProfile {
			missing = append(missing, fmt.Sprintf("%s: %d objects", ns, count[ns]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("want %d objects per profile namespace: %s", ObjectsPerProfile, strings.Join(missing, ", "))
	}
	return nil
}
