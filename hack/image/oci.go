package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Media types of the OCI image specification.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

type index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        descriptor        `json:"config"`
	Layers        []descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// imageConfig is the OCI image configuration (the parts regatta sets).
type imageConfig struct {
	Created      string        `json:"created"`
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Config       runConfig     `json:"config"`
	RootFS       rootFS        `json:"rootfs"`
	History      []historyItem `json:"history"`
}

type runConfig struct {
	User       string            `json:"User"`
	Entrypoint []string          `json:"Entrypoint"`
	Env        []string          `json:"Env"`
	WorkingDir string            `json:"WorkingDir"`
	Labels     map[string]string `json:"Labels"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type historyItem struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// blobs collects the content-addressed blobs of a layout.
type blobs map[string][]byte

// add stores data and returns its descriptor.
func (b blobs) add(mediaType string, data []byte) descriptor {
	sum := sha256.Sum256(data)
	d := "sha256:" + hex.EncodeToString(sum[:])
	b[d] = data
	return descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}
}

func (b blobs) addJSON(mediaType string, v any) (descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return descriptor{}, err
	}
	return b.add(mediaType, data), nil
}

// writeLayout writes an OCI image layout: oci-layout, index.json (the
// image index, tagged with ref) and blobs/sha256/.
func writeLayout(dir string, b blobs, top descriptor, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		return err
	}
	for d, data := range b {
		if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", d[len("sha256:"):]), data, 0o644); err != nil {
			return err
		}
	}
	top.Annotations = map[string]string{"org.opencontainers.image.ref.name": ref}
	idx, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: []descriptor{top}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
}

// writeArchive packs the layout folder into an uncompressed tar (an OCI
// archive, as skopeo's oci-archive: and docker load read), entries sorted
// and timed at mtime.
func writeArchive(dir, file string, mtime time.Time) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, p := range paths {
		if err := archiveEntry(tw, dir, p, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func archiveEntry(tw *tar.Writer, dir, p string, mtime time.Time) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return err
	}
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Size: info.Size()}
	if info.IsDir() {
		hdr.Name, hdr.Mode, hdr.Typeflag, hdr.Size = hdr.Name+"/", 0o755, tar.TypeDir, 0
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if info.IsDir() {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}
