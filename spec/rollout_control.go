package spec

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// KindRolloutControl is the kind of rollouts/<profile>.yaml.
const KindRolloutControl = "RolloutControl"

// RolloutsDir holds one RolloutControl per rolling profile.
const RolloutsDir = "rollouts"

// RolloutControl steers a profile's rollout by commit:
// rollouts/<profile>.yaml approves revisions for stages and pauses it.
type RolloutControl struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta         `yaml:"metadata"`
	Spec     RolloutControlSpec `yaml:"spec"`

	Source Source `yaml:"-"`
}

// RolloutControlSpec is the body of a RolloutControl.
type RolloutControlSpec struct {
	// Paused: no cluster starts the profile's rollout; those updating finish.
	Paused bool `yaml:"paused,omitempty"`
	// Approvals let stages with approval: true start for a revision.
	Approvals []Approval `yaml:"approvals,omitempty"`
}

// Approval approves one revision (a commit, 7 or more hex digits of it)
// of the profile's rollout for one stage.
type Approval struct {
	Stage    string       `yaml:"stage"`
	Revision CommitPrefix `yaml:"revision"`
}

// CommitPrefix is a commit, or a prefix of one, as written: unquoted
// digits (588502862991, 1e23456) are taken as the text they are, not as
// the number YAML would make of them.
type CommitPrefix string

func (c *CommitPrefix) decodeScalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float") {
		return "a commit (hex digits)"
	}
	*c = CommitPrefix(n.Value)
	return ""
}

// MinRevisionPrefix is the shortest commit prefix an approval may name.
const MinRevisionPrefix = 7

// Approved reports whether the stage is approved for the revision.
func (c *RolloutControl) Approved(stage, revision string) bool {
	if c == nil {
		return false
	}
	for _, a := range c.Spec.Approvals {
		if a.Stage == stage && len(a.Revision) >= MinRevisionPrefix && strings.HasPrefix(revision, string(a.Revision)) {
			return true
		}
	}
	return false
}

// RolloutControl returns the control file of a profile, or nil.
func (r *Repository) RolloutControl(profile string) *RolloutControl {
	for _, c := range r.Rollouts {
		if c.Metadata.Name == profile {
			return c
		}
	}
	return nil
}

func loadRolloutControls(r *Repository, diags *Diagnostics) {
	for _, f := range listYAML(r.FS, RolloutsDir, diags) {
		c := &RolloutControl{}
		if loadDocument(r.FS, f, KindRolloutControl, c, &c.Source, diags) {
			r.Rollouts = append(r.Rollouts, c)
		}
	}
}

func validateRolloutControl(r *Repository, c *RolloutControl, rep report) {
	checkName(rep, c.Metadata.Name, fileStem(c.Source.File), "file")
	p := r.Profile(c.Metadata.Name)
	switch {
	case p == nil && r.failedToLoad(KindProfile, c.Metadata.Name):
		return // the profile's own errors say why
	case p == nil:
		rep.errorf("metadata.name", "profile %q does not exist (rollouts/<profile>.yaml)", c.Metadata.Name)
		return
	case p.Spec.Rollout == nil && len(c.Spec.Approvals) > 0:
		rep.warnf("spec.approvals", "profile %q has no spec.rollout: approvals have no effect", c.Metadata.Name)
	}
	for i, a := range c.Spec.Approvals {
		field := fmt.Sprintf("spec.approvals[%d]", i)
		checkApprovalStage(rep, field+".stage", a.Stage, p.Spec.Rollout)
		if !isHexPrefix(string(a.Revision)) {
			rep.errorf(field+".revision", "%q is not a commit: give %d or more hex digits of it", a.Revision, MinRevisionPrefix)
		}
	}
}

func checkApprovalStage(rep report, field, stage string, ro *Rollout) {
	if stage == "" {
		rep.errorf(field, "required")
		return
	}
	if ro == nil {
		return
	}
	for _, s := range ro.Stages {
		if s.Name == stage {
			if !s.Approval {
				rep.warnf(field, "stage %q does not ask for approval (approval: true)", stage)
			}
			return
		}
	}
	rep.errorf(field, "stage %q is not in the profile's spec.rollout.stages", stage)
}

func isHexPrefix(s string) bool {
	if len(s) < MinRevisionPrefix || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
