package spec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Rollout is a profile's progressive rollout (spec.rollout): a change
// reaches the profile's clusters stage by stage, at most MaxUpdate at a
// time, each stage healthy and soaked before the next starts. A failure
// halts it.
type Rollout struct {
	// MaxUpdate caps the clusters updating at once across the profile: a
	// count or a percent of the profile's clusters. Nil: no cap beyond the
	// stages' own.
	MaxUpdate *MaxUpdate `yaml:"maxUpdate,omitempty"`
	// Stages are taken in order; a cluster belongs to the first stage that
	// selects it, and clusters no stage selects form a last stage.
	Stages []RolloutStage `yaml:"stages,omitempty"`
	// FailureThreshold is how many failed or unhealthy clusters halt the
	// rollout; default 1.
	FailureThreshold *int `yaml:"failureThreshold,omitempty"`
	// Windows are when a stage may start; none: any time.
	Windows []RolloutWindow `yaml:"windows,omitempty"`
}

// DefaultFailureThreshold halts a rollout on its first failed cluster.
const DefaultFailureThreshold = 1

// Threshold returns the failure threshold, defaulted.
func (r *Rollout) Threshold() int {
	if r == nil || r.FailureThreshold == nil {
		return DefaultFailureThreshold
	}
	return *r.FailureThreshold
}

// RolloutStage is one step of a rollout.
type RolloutStage struct {
	Name            string        `yaml:"name"`
	ClusterSelector LabelSelector `yaml:"clusterSelector"`
	// MaxUpdate caps the stage's clusters updating at once: a count or a
	// percent of the stage's clusters. Nil: the whole stage at once.
	MaxUpdate *MaxUpdate `yaml:"maxUpdate,omitempty"`
	// Soak is how long the stage stays healthy before the next starts.
	Soak string `yaml:"soak,omitempty"`
	// Approval requires rollouts/<profile>.yaml to approve the revision
	// for this stage before it starts.
	Approval bool `yaml:"approval,omitempty"`
}

// MaxUpdate is a count (2) or a percent ("25%") of clusters.
type MaxUpdate struct {
	Count   int
	Percent int
	// IsPercent tells "0%" from 0.
	IsPercent bool
}

// Of returns how many of total clusters may update at once: a percent
// rounds down, and never below 1.
func (m *MaxUpdate) Of(total int) int {
	if m == nil {
		return total
	}
	n := m.Count
	if m.IsPercent {
		n = total * m.Percent / 100
	}
	return max(n, 1)
}

// String renders the value as written: 2 or 25%.
func (m MaxUpdate) String() string {
	if m.IsPercent {
		return strconv.Itoa(m.Percent) + "%"
	}
	return strconv.Itoa(m.Count)
}

// decodeScalar reads an integer or a percent string.
func (m *MaxUpdate) decodeScalar(n *yaml.Node) string {
	const want = `a count such as 2 or a percent such as "25%"`
	if n.Kind != yaml.ScalarNode {
		return want
	}
	if n.Tag == "!!int" {
		c, err := strconv.Atoi(n.Value)
		if err != nil {
			return want
		}
		*m = MaxUpdate{Count: c}
		return ""
	}
	num, ok := strings.CutSuffix(n.Value, "%")
	p, err := strconv.Atoi(num)
	if n.Tag != "!!str" || !ok || err != nil {
		return want
	}
	*m = MaxUpdate{Percent: p, IsPercent: true}
	return ""
}

// scalarDecoder is a type that reads its own YAML scalar; decodeScalar
// returns what was expected when the node does not fit, or "".
type scalarDecoder interface {
	decodeScalar(n *yaml.Node) string
}

func scalarOf(v reflect.Value) (scalarDecoder, bool) {
	if !v.CanAddr() {
		return nil, false
	}
	u, ok := v.Addr().Interface().(scalarDecoder)
	return u, ok
}

// RolloutWindow is a time window in which a stage may start.
type RolloutWindow struct {
	// Days are Mon, Tue, Wed, Thu, Fri, Sat, Sun; none: every day.
	Days []string `yaml:"days,omitempty"`
	// Hours is "HH:MM-HH:MM", start included, end excluded; an end before
	// the start runs past midnight. Empty: the whole day.
	Hours string `yaml:"hours,omitempty"`
	// TimeZone is an IANA name such as Europe/Paris; default UTC.
	TimeZone string `yaml:"timeZone,omitempty"`
}

// Weekdays is the spelling of days in a window.
var Weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// ParseHours reads "HH:MM-HH:MM" into minutes after midnight.
func ParseHours(s string) (start, end int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not HH:MM-HH:MM", s)
	}
	if start, err = parseClock(a); err == nil {
		end, err = parseClock(b)
	}
	if err == nil && start == end {
		err = fmt.Errorf("%q is empty: start and end are equal", s)
	}
	return start, end, err
}

func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("%q is not a time HH:MM (00:00 to 24:00)", s)
	}
	return hh*60 + mm, nil
}
