package helm

import (
	"errors"
	"sort"

	"github.com/Masterminds/semver/v3"
)

var errNoMatch = errors.New("no version matches")

// selectVersion returns the highest version matching want: an exact
// version string wins; otherwise want is a semver constraint; empty means
// the newest stable version (prereleases only when the constraint names
// one, as Helm does).
func selectVersion(versions []string, want string) (string, error) {
	for _, v := range versions {
		if want != "" && v == want {
			return v, nil
		}
	}
	constraint := want
	if constraint == "" {
		constraint = "*"
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", err
	}
	var matching []*semver.Version
	byVersion := map[*semver.Version]string{}
	for _, raw := range versions {
		v, err := semver.NewVersion(raw)
		if err != nil || !c.Check(v) {
			continue
		}
		matching = append(matching, v)
		byVersion[v] = raw
	}
	if len(matching) == 0 {
		return "", errNoMatch
	}
	sort.Sort(sort.Reverse(semver.Collection(matching)))
	return byVersion[matching[0]], nil
}
