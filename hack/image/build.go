package main

import (
	"fmt"
	"time"
)

// labels are the image's OCI labels (also the index's annotations).
func (o options) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "regatta",
		"org.opencontainers.image.description": "GitOps fleet reconciler",
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.created":     o.Created.Format(time.RFC3339),
		"dev.regatta.ca-certificates":          o.CASource,
	}
}

// build writes the layout (and the archive) and returns the digest of
// the image index.
func build(o options) (string, error) {
	b := blobs{}
	base, err := buildLayer(baseEntries(o.Passwd, o.Group, o.CACerts), o.Created)
	if err != nil {
		return "", fmt.Errorf("base layer: %w", err)
	}
	baseDesc := b.add(mediaLayer, base.Blob)
	idx := index{SchemaVersion: 2, MediaType: mediaIndex, Annotations: o.labels()}
	for _, p := range o.Platforms {
		d, err := o.platformImage(b, p, base, baseDesc)
		if err != nil {
			return "", fmt.Errorf("%s/%s: %w", p.OS, p.Arch, err)
		}
		idx.Manifests = append(idx.Manifests, d)
	}
	top, err := b.addJSON(mediaIndex, idx)
	if err != nil {
		return "", err
	}
	if err := writeLayout(o.Out, b, top, o.Version); err != nil {
		return "", err
	}
	if o.Archive != "" {
		if err := writeArchive(o.Out, o.Archive, o.Created); err != nil {
			return "", err
		}
	}
	return top.Digest, nil
}

// platformImage adds one platform's binary layer, config and manifest.
func (o options) platformImage(b blobs, p platformBinary, base *layer, baseDesc descriptor) (descriptor, error) {
	bin, err := buildLayer(binaryEntries(p.Binary), o.Created)
	if err != nil {
		return descriptor{}, err
	}
	created := o.Created.Format(time.RFC3339)
	cfg := imageConfig{
		Created:      created,
		Architecture: p.Arch,
		OS:           p.OS,
		Config: runConfig{
			User:       fmt.Sprintf("%d:%d", uid, uid),
			Entrypoint: []string{"/usr/local/bin/regatta"},
			Env:        []string{"PATH=/usr/local/bin", "HOME=/home/regatta"},
			WorkingDir: "/home/regatta",
			Labels:     o.labels(),
		},
		RootFS: rootFS{Type: "layers", DiffIDs: []string{base.DiffID, bin.DiffID}},
		History: []historyItem{
			{Created: created, CreatedBy: "hack/image: user regatta (65532), /tmp, CA certificates (" + o.CASource + ")"},
			{Created: created, CreatedBy: "hack/image: /usr/local/bin/regatta " + o.Version},
		},
	}
	cfgDesc, err := b.addJSON(mediaConfig, cfg)
	if err != nil {
		return descriptor{}, err
	}
	m := manifest{
		SchemaVersion: 2,
		MediaType:     mediaManifest,
		Config:        cfgDesc,
		Layers:        []descriptor{baseDesc, b.add(mediaLayer, bin.Blob)},
	}
	d, err := b.addJSON(mediaManifest, m)
	if err != nil {
		return descriptor{}, err
	}
	d.Platform = &platform{Architecture: p.Arch, OS: p.OS}
	return d, nil
}
