package ui

import "errors"

// Errors of a History.
var (
	// ErrBeforeHistory: the time asked for is older than the oldest
	// status commit kept.
	ErrBeforeHistory = errors.New("before the oldest status commit kept")
	// ErrUnknownCommit: the status branch's history has no such commit.
	ErrUnknownCommit = errors.New("no such status commit")
	// ErrNoParent: the status commit is the branch's first.
	ErrNoParent = errors.New("the first status commit")
)
