package spec

import (
	"strings"

	"github.com/Masterminds/semver/v3"
)

// bound is one end of a version range; a nil version is unbounded.
type bound struct {
	v         *semver.Version
	inclusive bool
}

// versionRange is the set of versions a classifier's constraints allow,
// ignoring NotEqual (which removes a single point).
type versionRange struct{ lo, hi bound }

func versionRangeOf(c *Classifier) versionRange {
	var r versionRange
	for _, vc := range c.Spec.KubernetesVersionConstraints {
		v, err := ParseVersion(vc.Version)
		if err != nil {
			continue
		}
		switch vc.Comparison {
		case CompareEqual:
			r.raiseLo(bound{v, true})
			r.lowerHi(bound{v, true})
		case CompareGreaterThan:
			r.raiseLo(bound{v, false})
		case CompareGreaterThanOrEqualTo:
			r.raiseLo(bound{v, true})
		case CompareLessThan:
			r.lowerHi(bound{v, false})
		case CompareLessThanOrEqualTo:
			r.lowerHi(bound{v, true})
		}
	}
	return r
}

func (r *versionRange) raiseLo(b bound) {
	if r.lo.v == nil || b.v.GreaterThan(r.lo.v) || (b.v.Equal(r.lo.v) && !b.inclusive) {
		r.lo = b
	}
}

func (r *versionRange) lowerHi(b bound) {
	if r.hi.v == nil || b.v.LessThan(r.hi.v) || (b.v.Equal(r.hi.v) && !b.inclusive) {
		r.hi = b
	}
}

// overlaps reports whether some version lies in both ranges.
func (r versionRange) overlaps(o versionRange) bool {
	lo, hi := r.lo, r.hi
	if o.lo.v != nil && (lo.v == nil || o.lo.v.GreaterThan(lo.v) || (o.lo.v.Equal(lo.v) && !o.lo.inclusive)) {
		lo = o.lo
	}
	if o.hi.v != nil && (hi.v == nil || o.hi.v.LessThan(hi.v) || (o.hi.v.Equal(hi.v) && !o.hi.inclusive)) {
		hi = o.hi
	}
	if lo.v == nil || hi.v == nil {
		return true
	}
	if lo.v.Equal(hi.v) {
		return lo.inclusive && hi.inclusive
	}
	return lo.v.LessThan(hi.v)
}

// String describes the range, e.g. ">= 1.37.0 and < 1.37.0".
func (r versionRange) String() string {
	var parts []string
	if r.lo.v != nil {
		op := ">"
		if r.lo.inclusive {
			op = ">="
		}
		parts = append(parts, op+" "+r.lo.v.String())
	}
	if r.hi.v != nil {
		op := "<"
		if r.hi.inclusive {
			op = "<="
		}
		parts = append(parts, op+" "+r.hi.v.String())
	}
	return strings.Join(parts, " and ")
}
