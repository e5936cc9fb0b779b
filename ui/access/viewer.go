// Package access decides who may read the web UI and what each reader
// sees: anyone on loopback by default, or behind Kubernetes
// authentication (TokenReview, then SubjectAccessReview on regatta's
// virtual resources) or OpenID Connect. A reader is a Viewer in the
// request's context.
package access

import (
	"context"
	"slices"
)

// Viewer is who reads a page and what they may see.
type Viewer struct {
	// Name is the user as authenticated ("" when anonymous on loopback).
	Name string
	// Fleet: the viewer sees the whole fleet.
	Fleet bool
	// Tenants are the tenants whose clusters and profiles the viewer
	// sees when not Fleet (status.ForTenant of each).
	Tenants []string
}

// SeesTenant reports whether the viewer may see the tenant's part.
func (v Viewer) SeesTenant(t string) bool { return v.Fleet || slices.Contains(v.Tenants, t) }

type viewerKey struct{}

// WithViewer returns ctx carrying v.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// ViewerFrom returns the viewer in ctx; a context without one sees
// nothing (the zero Viewer).
func ViewerFrom(ctx context.Context) Viewer {
	v, _ := ctx.Value(viewerKey{}).(Viewer)
	return v
}
