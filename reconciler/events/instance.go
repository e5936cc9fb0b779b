package events

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Matches are the matching resources of one source cluster.
type Matches struct {
	Cluster string
	Objects []map[string]any
}

// Instance is one rendering of an event profile: for one resource
// (oneForEvent) or for all the resources of one source cluster.
type Instance struct {
	// Name is deterministic and distinct between the instances of a
	// pair: a readable stem and a hash of the source cluster and the
	// resource's kind, namespace and name.
	Name          string
	SourceCluster string
	// Resource names the object (Kind/namespace/name), or counts the
	// resources of an instance for all.
	Resource  string
	Object    map[string]any
	Resources []any
}

// maxStem bounds the readable part of an instance name: with the hash it
// leaves room in a 63-character name for a prefix of the user's.
const maxStem = 40

// Instances returns the instances of the matches, in a stable order. A
// source cluster with no matching resource has no instance, also when
// oneForEvent is false.
func Instances(oneForEvent bool, matches []Matches) []Instance {
	var out []Instance
	for _, m := range matches {
		if len(m.Objects) == 0 {
			continue
		}
		if !oneForEvent {
			out = append(out, forAll(m))
			continue
		}
		for _, o := range m.Objects {
			out = append(out, Instance{
				Name:          instanceName(stringAt(o, "metadata", "name"), m.Cluster+"/"+objectKey(o)),
				SourceCluster: m.Cluster,
				Resource:      resourceName(o),
				Object:        o,
			})
		}
	}
	return out
}

func forAll(m Matches) Instance {
	res := make([]any, len(m.Objects))
	for i, o := range m.Objects {
		res[i] = o
	}
	return Instance{
		Name:          instanceName(m.Cluster, m.Cluster),
		SourceCluster: m.Cluster,
		Resource:      plural(len(m.Objects)),
		Resources:     res,
	}
}

func plural(n int) string {
	if n == 1 {
		return "1 resource"
	}
	return strconv.Itoa(n) + " resources"
}

// instanceName is stem (lower-cased, reduced to a DNS label's characters,
// cut to maxStem) and the first 8 hex digits of the SHA-256 of key.
func instanceName(stem, key string) string {
	sum := sha256.Sum256([]byte(key))
	var b strings.Builder
	for _, r := range strings.ToLower(stem) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() == maxStem {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		s = "event"
	}
	return s + "-" + hex.EncodeToString(sum[:4])
}

// objectKey is group/kind/namespace/name of an object.
func objectKey(o map[string]any) string {
	api := stringAt(o, "apiVersion")
	group := ""
	if i := strings.IndexByte(api, '/'); i >= 0 {
		group = api[:i]
	}
	return group + "/" + stringAt(o, "kind") + "/" + stringAt(o, "metadata", "namespace") + "/" + stringAt(o, "metadata", "name")
}

func resourceName(o map[string]any) string {
	ns := stringAt(o, "metadata", "namespace")
	if ns == "" {
		return stringAt(o, "kind") + "/" + stringAt(o, "metadata", "name")
	}
	return stringAt(o, "kind") + "/" + ns + "/" + stringAt(o, "metadata", "name")
}

func stringAt(o map[string]any, path ...string) string {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}
