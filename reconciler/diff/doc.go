// Package diff compares two revisions of a fleet repository the way
// `regatta plan` shows it: which clusters gain or lose which profiles and
// why, and per (cluster, profile) which objects are created, updated (with a
// unified diff) and deleted. It also writes the comparison as text, Markdown
// or JSON, and, with credentials, compares the head rendering with what each
// cluster holds now (server-side dry-run through package apply).
//
// # Cost
//
// Both revisions are rendered with one render.Renderer, so its cache does
// the heavy lifting: a pair whose inputs (profile spec, cluster facts, the
// Git tree hashes of every path the render read) are equal at both
// revisions gets the same render.Result.Key twice, the second render is a
// cache hit, and the pair is skipped without comparing objects. Pairs whose
// inputs changed are rendered once per distinct input, and their object
// comparison is done once per distinct (base key, head key) and shared by
// every cluster with those keys.
//
// # Secrets
//
// Nothing this package writes holds a Secret value. A changed Secret's
// diff shows its data and stringData keys with the markers (redacted) and
// (redacted, changed), and the change lists the keys whose values changed.
// Objects read from a SOPS-encrypted file are treated the same way, whatever
// their kind: every field but apiVersion, kind, metadata.name and
// metadata.namespace is redacted.
package diff
