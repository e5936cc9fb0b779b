package repo

import (
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// TrailerSourceRevision is the trailer regatta adds to a status commit,
// naming the source revision the status describes. Its presence also marks
// a commit as made by regatta.
const TrailerSourceRevision = "Regatta-Source-Revision"

// Signature names a commit author or committer.
type Signature struct {
	Name  string
	Email string
}

// Commit describes a commit.
type Commit struct {
	SHA       string
	Parents   []string
	Author    Signature
	Committer Signature
	Time      time.Time // committer time
	Message   string
}

func newCommit(c *object.Commit) Commit {
	parents := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = p.String()
	}
	return Commit{
		SHA:       c.Hash.String(),
		Parents:   parents,
		Author:    Signature{Name: c.Author.Name, Email: c.Author.Email},
		Committer: Signature{Name: c.Committer.Name, Email: c.Committer.Email},
		Time:      c.Committer.When,
		Message:   c.Message,
	}
}

// Trailer returns the value of the last trailer with that key ("Key: value"
// lines in the message's last paragraph), or "".
func (c Commit) Trailer(key string) string {
	value := ""
	for _, line := range lastParagraph(c.Message) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), key) {
			value = strings.TrimSpace(v)
		}
	}
	return value
}

// ByRegatta reports whether regatta made the commit: it carries the
// Regatta-Source-Revision trailer, or its author email is the configured
// status author's (when that is set). The daemon uses it to keep its own
// status commits from triggering a pass.
func (c Commit) ByRegatta(author Signature) bool {
	if c.Trailer(TrailerSourceRevision) != "" {
		return true
	}
	return author.Email != "" && strings.EqualFold(c.Author.Email, author.Email)
}

func lastParagraph(msg string) []string {
	paras := strings.Split(strings.TrimSpace(strings.ReplaceAll(msg, "\r\n", "\n")), "\n\n")
	return strings.Split(paras[len(paras)-1], "\n")
}

// formatMessage appends trailers to a message as its last paragraph.
func formatMessage(msg string, trailers []Trailer) string {
	msg = strings.TrimRight(msg, "\n")
	if len(trailers) == 0 {
		return msg + "\n"
	}
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString("\n\n")
	for _, t := range trailers {
		b.WriteString(t.Key + ": " + t.Value + "\n")
	}
	return b.String()
}

// Trailer is a "Key: value" line at the end of a commit message.
type Trailer struct {
	Key   string
	Value string
}
