package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// Output formats of Write.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// DefaultMarkdownBytes keeps a Markdown report under the size of a pull
// request comment (GitHub allows 65,536 characters).
const DefaultMarkdownBytes = 60000

// WriteOptions configures Write.
type WriteOptions struct {
	// Format is FormatText (default), FormatMarkdown or FormatJSON.
	Format string
	// Color adds ANSI colours to text output.
	Color bool
	// MaxBytes bounds Markdown output: groups that do not fit lose their
	// diffs, then their object lists. 0 means DefaultMarkdownBytes.
	MaxBytes int
}

// Write writes the report in the chosen format.
func Write(w io.Writer, r *Report, opts WriteOptions) error {
	r.normalize()
	switch opts.Format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	case FormatMarkdown:
		if opts.MaxBytes <= 0 {
			opts.MaxBytes = DefaultMarkdownBytes
		}
		_, err := io.WriteString(w, markdown(r, opts.MaxBytes))
		return err
	case FormatText, "":
		_, err := io.WriteString(w, text(r, palette(opts.Color)))
		return err
	}
	return fmt.Errorf("unknown output format %q (text, markdown or json)", opts.Format)
}

// normalize makes every list of the report non-nil, so that JSON holds []
// rather than null.
func (r *Report) normalize() {
	if r.Errors == nil {
		r.Errors = []Problem{}
	}
	if r.Warnings == nil {
		r.Warnings = []Warning{}
	}
	if r.Groups == nil {
		r.Groups = []Group{}
	}
	for i := range r.Groups {
		for j := range r.Groups[i].Profiles {
			if r.Groups[i].Profiles[j].Objects == nil {
				r.Groups[i].Profiles[j].Objects = []ObjectChange{}
			}
		}
	}
}

// headline is the summary line every format starts with.
func headline(r *Report) string {
	s := r.Summary
	switch {
	case r.Failed() && len(r.Groups) == 0:
		return "the head revision has errors"
	case !s.Changed:
		return fmt.Sprintf("no changes (%s)", plural(s.Clusters, "cluster"))
	}
	return fmt.Sprintf("%d of %s affected", s.ClustersAffected, plural(s.Clusters, "cluster"))
}

// countsLine is the object and profile totals.
func countsLine(s Summary) string {
	parts := []string{fmt.Sprintf("%d created, %d updated, %d deleted", s.Created, s.Updated, s.Deleted)}
	if s.Released > 0 {
		parts[0] += fmt.Sprintf(", %d released", s.Released)
	}
	parts = append(parts, fmt.Sprintf("profiles: %d gained, %d lost", s.ProfilesGained, s.ProfilesLost))
	if s.ClustersAdded+s.ClustersRemoved > 0 {
		parts = append(parts, fmt.Sprintf("clusters: %d added, %d removed", s.ClustersAdded, s.ClustersRemoved))
	}
	return "objects: " + strings.Join(parts, "; ")
}

// factsLine says where cluster facts came from.
func factsLine(f Facts) string {
	var b strings.Builder
	if f.Source == FactsStatusBranch {
		fmt.Fprintf(&b, "status branch %s at %s", f.StatusBranch, status.ShortRevision(f.StatusRevision))
		if n := len(f.WithoutStatus); n > 0 {
			fmt.Fprintf(&b, "; Kubernetes %s assumed for %s without status (%s)",
				f.KubernetesVersion, plural(n, "cluster"), ClusterList(f.WithoutStatus, 5))
		}
	} else {
		fmt.Fprintf(&b, "flags (Kubernetes %s)", f.KubernetesVersion)
	}
	for _, n := range f.Notes {
		b.WriteString("; " + n)
	}
	return b.String()
}

// signatureLine says whether the daemon would let head in, and by which
// key ("" without --verify-commits).
func signatureLine(s *Signature) string {
	if s == nil {
		return ""
	}
	if !s.Accepted {
		return fmt.Sprintf("signature check (%s): REFUSED: %s", s.Mode, s.Message)
	}
	key := s.Key
	if s.Signer != "" {
		key += " (" + s.Signer + ")"
	}
	return fmt.Sprintf("signature check (%s): accepted, signed by %s", s.Mode, key)
}

func revLine(r *Report) string {
	return fmt.Sprintf("base %s (%s) → head %s (%s)", status.ShortRevision(r.Base.Revision), r.Base.Ref, status.ShortRevision(r.Head.Revision), r.Head.Ref)
}

// profileLine summarises one profile change: "apps: updated (+1 ~2 -0)".
func profileLine(pc ProfileChange) string {
	return fmt.Sprintf("%s: %s (%s)", pc.Profile, pc.Change, countsShort(pc.Counts))
}

// instanceLine is an event instance: name, resource, source cluster and
// its counts.
func instanceLine(in InstanceChange) string {
	return fmt.Sprintf("%s: %s on %s (%s)", in.Name, in.Resource, in.SourceCluster, countsShort(in.Counts))
}

func countsShort(c Counts) string {
	s := fmt.Sprintf("+%d ~%d -%d", c.Created, c.Updated, c.Deleted)
	if c.Released > 0 {
		s += fmt.Sprintf(" released %d", c.Released)
	}
	return s
}

func reasonText(pc ProfileChange) string {
	msgs := make([]string, len(pc.Reasons))
	for i, r := range pc.Reasons {
		msgs[i] = r.Message
	}
	return strings.Join(msgs, "; ")
}

func actionMark(action string) string {
	switch action {
	case ActionCreated:
		return "+"
	case ActionUpdated:
		return "~"
	case ActionDeleted:
		return "-"
	}
	return "="
}

func objectLine(o ObjectChange) string {
	s := fmt.Sprintf("%s %s", actionMark(o.Action), o.Ref())
	if o.Addon != "" {
		s += " [" + o.Addon + "]"
	}
	if o.Action == ActionReleased {
		s += " released (left in place)"
	}
	if len(o.RedactedKeys) > 0 {
		s += " — changed values (redacted): " + strings.Join(o.RedactedKeys, ", ")
	}
	if o.Message != "" {
		s += " — " + o.Message
	}
	return s
}

func groupTitle(g Group, max int) string {
	s := fmt.Sprintf("%s (%s)", ClusterList(g.Clusters, max), plural(len(g.Clusters), "cluster"))
	if g.Change != "" {
		s += ": cluster " + g.Change
	}
	return s
}
