package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// KindSignersPolicy is the kind of a signers policy file.
const KindSignersPolicy = "SignersPolicy"

// APIVersion is the apiVersion of a signers policy file.
const APIVersion = "regatta.dev/v1alpha1"

// Policy says which signers may change which paths. The first rule with
// a glob matching a changed path decides; a path no rule matches may be
// changed by no one.
//
//	apiVersion: regatta.dev/v1alpha1
//	kind: SignersPolicy
//	groups:
//	  platform: [alice@example.com, "SHA256:..."]   # principals, e-mails, key fingerprints
//	  team-a: [bob@example.com]
//	rules:
//	- paths: ["tenants/team-a/**"]
//	  signers: [team-a, platform]
//	- paths: ["**"]
//	  signers: [platform]
type Policy struct {
	APIVersion string              `yaml:"apiVersion"`
	Kind       string              `yaml:"kind"`
	Groups     map[string][]string `yaml:"groups"`
	Rules      []Rule              `yaml:"rules"`
	// File is where the policy was read, for messages.
	File string `yaml:"-"`
}

// Rule gives the signers of some groups the paths its globs match ("**"
// matches any number of path segments, other segments path.Match's
// patterns).
type Rule struct {
	Paths   []string `yaml:"paths"`
	Signers []string `yaml:"signers"`
	// Line is the rule's line in File.
	Line int `yaml:"-"`
}

// LoadPolicy reads and validates a signers policy file.
func LoadPolicy(file string) (*Policy, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, &PolicyError{File: file, Message: err.Error()}
	}
	return ParsePolicy(file, b)
}

// ParsePolicy decodes a policy strictly (unknown fields are errors) and
// validates it; every error names file and line.
func ParsePolicy(file string, b []byte) (*Policy, error) {
	p := &Policy{File: file}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		return nil, &PolicyError{File: file, Message: err.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &PolicyError{File: file, Message: err.Error()}
	}
	lines := ruleLines(&doc)
	for i := range p.Rules {
		if i < len(lines) {
			p.Rules[i].Line = lines[i]
		}
	}
	return p, p.validate()
}

// ruleLines returns the line of each item of the top-level rules list.
func ruleLines(doc *yaml.Node) []int {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value == "rules" {
			var out []int
			for _, item := range m[i+1].Content {
				out = append(out, item.Line)
			}
			return out
		}
	}
	return nil
}

// PolicyError is a mistake in a signers policy file, at file:line.
type PolicyError struct {
	File    string
	Line    int
	Field   string
	Message string
}

func (e *PolicyError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return where + ": " + e.Message
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Field, e.Message)
}

// PolicyErrors lists the PolicyErrors in an error of ParsePolicy or
// LoadPolicy (a decoding error becomes one without a line).
func PolicyErrors(err error) []*PolicyError {
	var out []*PolicyError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, PolicyErrors(e)...)
		}
		return out
	}
	var pe *PolicyError
	if errors.As(err, &pe) {
		return []*PolicyError{pe}
	}
	if err != nil {
		out = append(out, &PolicyError{Message: err.Error()})
	}
	return out
}

func (p *Policy) validate() error {
	var errs []error
	add := func(line int, format string, args ...any) {
		field, msg, _ := strings.Cut(fmt.Sprintf(format, args...), ": ")
		errs = append(errs, &PolicyError{File: p.File, Line: line, Field: field, Message: msg})
	}
	if p.APIVersion != APIVersion || p.Kind != KindSignersPolicy {
		add(1, "apiVersion/kind: want %s %s", APIVersion, KindSignersPolicy)
	}
	for name, ids := range p.Groups {
		if len(ids) == 0 {
			add(0, "groups.%s: lists no signer", name)
		}
	}
	if len(p.Rules) == 0 {
		add(0, "rules: none: with no rule no path may change")
	}
	for i, r := range p.Rules {
		p.validateRule(i, r, add)
	}
	return errors.Join(errs...)
}

func (p *Policy) validateRule(i int, r Rule, add func(int, string, ...any)) {
	if len(r.Paths) == 0 {
		add(r.Line, "rules[%d].paths: empty", i)
	}
	if len(r.Signers) == 0 {
		add(r.Line, "rules[%d].signers: empty", i)
	}
	for j, g := range r.Paths {
		if err := checkGlob(g); err != nil {
			add(r.Line, "rules[%d].paths[%d]: %v", i, j, err)
		}
	}
	for j, g := range r.Signers {
		if _, ok := p.Groups[g]; !ok {
			add(r.Line, "rules[%d].signers[%d]: group %q is not defined under groups", i, j, g)
		}
	}
}

// decide returns the rule deciding a path (nil: none matches).
func (p *Policy) decide(file string) *Rule {
	for i := range p.Rules {
		for _, g := range p.Rules[i].Paths {
			if matchGlob(g, file) {
				return &p.Rules[i]
			}
		}
	}
	return nil
}

// allows reports whether a signer may change a file, and if not why.
func (p *Policy) allows(s signer, file string) (bool, string) {
	r := p.decide(file)
	if r == nil {
		return false, fmt.Sprintf("no rule of %s matches this path", p.File)
	}
	for _, g := range r.Signers {
		for _, member := range p.Groups[g] {
			for _, id := range s.ids {
				if strings.EqualFold(member, id) {
					return true, ""
				}
			}
		}
	}
	return false, fmt.Sprintf("%s:%d gives this path to %s only", p.File, r.Line, strings.Join(r.Signers, ", "))
}

func checkGlob(g string) error {
	if g == "" || strings.HasPrefix(g, "/") {
		return fmt.Errorf("glob %q: want a relative path pattern", g)
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("glob %q: %v", g, err)
		}
	}
	return nil
}

// matchGlob matches a slash-separated path against a glob where "**"
// stands for any number of segments.
func matchGlob(glob, name string) bool {
	return matchSegs(strings.Split(glob, "/"), strings.Split(name, "/"))
}

func matchSegs(g, n []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(n); i++ {
				if matchSegs(g[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], n[0]); !ok {
			return false
		}
		g, n = g[1:], n[1:]
	}
	return len(n) == 0
}

// UnusedGlobs lists the globs that match none of files (a repository's
// paths): most likely typos, since they give nobody anything.
func (p *Policy) UnusedGlobs(files []string) []*PolicyError {
	var out []*PolicyError
	for i, r := range p.Rules {
		for j, g := range r.Paths {
			used := false
			for _, f := range files {
				if used = matchGlob(g, f); used {
					break
				}
			}
			if !used {
				out = append(out, &PolicyError{File: p.File, Line: r.Line, Field: fmt.Sprintf("rules[%d].paths[%d]", i, j),
					Message: fmt.Sprintf("glob %q matches no file of the repository", g)})
			}
		}
	}
	return out
}
