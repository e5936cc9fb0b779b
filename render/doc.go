// Package render turns one profile of a fleet repository into the exact
// Kubernetes objects to apply to one cluster: plain YAML, Kustomize and
// Helm sources, Go templates, per-cluster overlays and SOPS decryption.
// It is offline: the cluster's facts arrive in the Request, the repository
// as an fs.FS at one revision.
//
// # Sources
//
// manifests.path: one file, or every .yaml, .yml and .json file below a
// folder, recursively, in lexical path order. Files are multi-document;
// empty documents (blank or comments only) are skipped; a document whose
// kind ends in "List" and that has items is replaced by its items; a
// document without apiVersion or kind is an error naming file and line.
//
// kustomize.path: kustomize (sigs.k8s.io/kustomize/api krusty) over the
// repository: bases, overlays and components; plugins and helmCharts off;
// output in kustomize's legacy order unless the kustomization sets
// sortOptions. Files may be loaded from anywhere in the repository (as in
// Flux) but nothing outside it: the filesystem kustomize sees is rooted at
// the repository and resolves symlinks inside it (spec.ResolvePath).
// Remote bases and files (URLs, git) are refused with ErrRemoteRefused
// unless Options.AllowRemoteBases. The add-on's targetNamespace and patches
// are added to the root kustomization as Flux does: namespace is set, the
// patches are appended to its patches.
//
// helm: values are layered chart defaults < valuesFiles in order < values <
// the selected overlay's values (helm.MergeValues; maps merge, anything
// else replaces). The chart is rendered for the cluster's Kubernetes version
// and API versions; steps are pre hooks by weight, the release's objects
// (CRDs first), post hooks by weight; test hooks are dropped.
//
// # Per-cluster overlays
//
// For each add-on, the FIRST entry of spec.overlays whose addon names it
// and whose clusterSelector matches the cluster's effective labels
// (classifier labels included) applies; later matching entries are
// ignored, and an add-on without a matching entry renders unchanged.
// The selected overlay:
//   - path: replaces the add-on's kustomize.path or manifests.path (the
//     add-on's targetNamespace and patches still apply). Templated like
//     add-on paths.
//   - values (Helm only): merged over the add-on's values as the last
//     layer: chart defaults < valuesFiles in order < values < overlay
//     values. String leaves are templated like values.
//   - patches: applied after the add-on is rendered, to its final objects
//     (after kustomize's own patches, name prefixes and targetNamespace;
//     for Helm to hooks and release objects alike), with the semantics of
//     kustomize and Flux `patches`: a strategic-merge patch or a JSON 6902
//     patch, with an optional target (group, version, kind, name regex,
//     namespace, labelSelector, annotationSelector). Target names and
//     namespaces are therefore the final ones. A strategic-merge patch
//     without target must match an object by its own apiVersion, kind,
//     name and namespace; a target that matches nothing is not an error.
//     A strategic-merge "$patch: delete" removes the object. Steps keep
//     their order and the objects theirs. Patches are not templated. A
//     failing patch is an error at spec.overlays[i].patches.
//
// Overlays are selected per add-on, independently: one cluster may get
// overlay 2 for one add-on and overlay 0 for another.
//
// # Templates
//
// Go text/template with sprig v3 functions (without env and expandenv) and
// missingkey=error, over this data:
//
//	.Cluster.Name .Cluster.Labels .Cluster.Values .Cluster.KubernetesVersion
//	.Profile.Name .Revision
//
// What is executed as a template:
//   - every add-on path: manifests.path, kustomize.path, helm.path, each
//     helm.valuesFiles entry, and an overlay's path;
//   - the content of every helm values file (after SOPS decryption);
//   - every string leaf of helm.values and of an overlay's values;
//   - for an add-on with template: true, every file its source reads from
//     the repository, after SOPS decryption and before YAML parsing: for
//     manifests each manifest file; for kustomize every file kustomize
//     reads (kustomization files, resources, patch files, generator
//     sources) — the root kustomization is templated before targetNamespace
//     and patches are added.
//
// Nothing else is: kustomize.patches and overlay patches, chart templates
// (Helm's own engine renders those) and, without template: true, manifest
// files. Text without "{{" is used as is. A literal "{{" in a templated
// file is written {{ "{{" }}. A missing map key is an error naming the
// template (the file, or the profile file and field) and the key; to make
// a key optional use index, which does not fail: {{ index .Cluster.Values
// "region" | default "eu" }}.
//
// Every execution is bounded by Options.TemplateLimits (time, steps,
// value size, output; tpllimits.go, instrument.go, tplfuncs.go), and a
// loop or size written as a literal past them is refused before it runs
// (render/tplscan), chart templates included. Templated fields enter the
// cache key by their results; templated files by the template data they
// read (tplreads.go).
//
// # SOPS
//
// A file that is a SOPS document (render/sops.IsEncrypted) is decrypted
// when it is read, before templates and parsing: manifest files, every
// file kustomize reads (so kustomize transforms plaintext and the MAC
// holds) and values files. Decryption uses Options.Keys restricted to
// ClusterFacts.AgeRecipients when that is set. Errors name the file and
// never hold plaintext.
//
// # Errors
//
// Failures are *Error: "profile P: addon A: FILE:LINE: message", located
// in the repository file that caused them or, for a field of the profile,
// at that field's line of the profile file ("profiles/p.yaml:12:
// spec.addons[0].helm.valuesFiles[1]: values/x.yaml does not exist").
//
// # Cache
//
// Results are cached by a key over everything that can change them; see
// key.go for what enters the key and why a fleet of clusters that share
// their inputs renders once. Concurrent requests with the same inputs
// share one render. Returned results share the cached objects: the
// objects are read-only, and a caller that changes one copies it first
// (Object.DeepCopy, Result.DeepCopy); the Result and its slices are the
// caller's.
package render
