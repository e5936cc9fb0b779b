package spec

// Annotations of the Namespace a Helm add-on's createNamespace creates.
// They are part of the format: the renderer puts the first on the
// Namespace it renders, the apply engine and users read both on the
// cluster.
const (
	// AnnotationCreatedNamespace ("true") marks a Namespace that regatta
	// creates only when it is missing: one that exists and is not
	// regatta's is never adopted, and regatta deletes one it created only
	// when nothing else is in it (or AnnotationPruneContents allows it).
	AnnotationCreatedNamespace = "regatta.dev/created-namespace"
	// AnnotationPruneContents ("enabled") on such a Namespace lets
	// prune and withdrawal delete it with whatever it still holds.
	AnnotationPruneContents = "regatta.dev/prune-contents"
	// PruneContentsEnabled is the value of AnnotationPruneContents that
	// opts in.
	PruneContentsEnabled = "enabled"
)

// KeptWhileNotEmpty reports whether a Namespace with these annotations is
// one that createNamespace renders and that did not opt in to losing its
// contents: prune and withdrawal delete it only while nothing else is in
// it.
func KeptWhileNotEmpty(annotations map[string]string) bool {
	return annotations[AnnotationCreatedNamespace] == "true" && annotations[AnnotationPruneContents] != PruneContentsEnabled
}

// PresetNamespaces exist on every cluster: createNamespace has nothing to
// create there.
var PresetNamespaces = map[string]bool{
	"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
}
