// Package plan is the pure part of a pass: which profiles each cluster
// gets, with which effective labels, in which order. It talks to no cluster
// and reads no files; its inputs are a loaded repository and cluster facts.
package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Classified is the labels one matching classifier gives a cluster.
type Classified struct {
	Classifier string
	Labels     map[string]string
}

// LabelNote explains why a classifier label did not take effect.
type LabelNote struct {
	Key string `json:"key" yaml:"key"`
	// Reason is "overridden" (cluster.yaml sets the key) or "conflict"
	// (matching classifiers disagree, so none of them sets it).
	Reason string `json:"reason" yaml:"reason"`
	// Message names the classifiers and values involved.
	Message string `json:"message" yaml:"message"`
}

// Reasons of a LabelNote.
const (
	ReasonOverridden = "overridden"
	ReasonConflict   = "conflict"
)

// EffectiveLabels merges a cluster's own labels with the labels of its
// matching classifiers. The cluster's own labels win on the same key; two
// classifiers that set one key to different values set neither, and the
// conflict is noted rather than resolved by chance.
func EffectiveLabels(static map[string]string, classified []Classified) (map[string]string, []LabelNote) {
	out := make(map[string]string, len(static))
	for k, v := range static {
		out[k] = v
	}
	setters := map[string][]Classified{}
	for _, c := range classified {
		for k := range c.Labels {
			setters[k] = append(setters[k], c)
		}
	}
	var notes []LabelNote
	for _, key := range sortedKeys(setters) {
		if note, ok := mergeKey(out, static, key, setters[key]); !ok {
			notes = append(notes, note)
		}
	}
	return out, notes
}

func mergeKey(out, static map[string]string, key string, cs []Classified) (LabelNote, bool) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Classifier < cs[j].Classifier })
	values := map[string]bool{}
	var parts []string
	for _, c := range cs {
		values[c.Labels[key]] = true
		parts = append(parts, fmt.Sprintf("%s sets %s", c.Classifier, c.Labels[key]))
	}
	if v, ok := static[key]; ok {
		if len(values) == 1 && values[v] {
			return LabelNote{}, true
		}
		return LabelNote{Key: key, Reason: ReasonOverridden, Message: fmt.Sprintf(
			"cluster.yaml sets %s=%s over classifier labels (%s)", key, v, strings.Join(parts, ", "))}, false
	}
	if len(values) > 1 {
		return LabelNote{Key: key, Reason: ReasonConflict, Message: fmt.Sprintf(
			"classifiers disagree, label not set: %s", strings.Join(parts, ", "))}, false
	}
	out[key] = cs[0].Labels[key]
	return LabelNote{}, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
