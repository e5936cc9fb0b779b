package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sort"
	"time"
)

// entry is one file or folder of a layer.
type entry struct {
	Path     string // without a leading slash; folders end in /
	Mode     int64
	UID, GID int
	Data     []byte // regular files
	Source   string // regular files read from disk when Data is nil
}

// layer is a gzip-compressed tar with its digests.
type layer struct {
	Blob   []byte
	Digest string // sha256:<hex> of Blob
	DiffID string // sha256:<hex> of the uncompressed tar
}

// buildLayer writes entries, sorted by path, with every time set to
// mtime and no user or group names, so that the same files give the
// same bytes.
func buildLayer(entries []entry, mtime time.Time) (*layer, error) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	var blob bytes.Buffer
	zw, err := gzip.NewWriterLevel(&blob, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	diff := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, diff))
	for _, e := range entries {
		if err := writeEntry(tw, e, mtime); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(blob.Bytes())
	return &layer{
		Blob:   blob.Bytes(),
		Digest: "sha256:" + hex.EncodeToString(sum[:]),
		DiffID: "sha256:" + hex.EncodeToString(diff.Sum(nil)),
	}, nil
}

func writeEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	hdr := &tar.Header{
		Name:    e.Path,
		Mode:    e.Mode,
		Uid:     e.UID,
		Gid:     e.GID,
		ModTime: mtime,
		Format:  tar.FormatPAX,
	}
	if e.Path[len(e.Path)-1] == '/' {
		hdr.Typeflag = tar.TypeDir
		return tw.WriteHeader(hdr)
	}
	data := e.Data
	if data == nil {
		var err error
		if data, err = os.ReadFile(e.Source); err != nil {
			return err
		}
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// baseEntries are the files every platform's image shares: the user,
// its group and home, /tmp and the CA certificates.
func baseEntries(passwd, group, caCerts string) []entry {
	return []entry{
		{Path: "etc/", Mode: 0o755},
		{Path: "etc/passwd", Mode: 0o644, Source: passwd},
		{Path: "etc/group", Mode: 0o644, Source: group},
		{Path: "etc/ssl/", Mode: 0o755},
		{Path: "etc/ssl/certs/", Mode: 0o755},
		{Path: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Source: caCerts},
		{Path: "home/", Mode: 0o755},
		{Path: "home/regatta/", Mode: 0o700, UID: uid, GID: uid},
		{Path: "tmp/", Mode: 0o1777},
	}
}

// binaryEntries hold the regatta binary.
func binaryEntries(binary string) []entry {
	return []entry{
		{Path: "usr/", Mode: 0o755},
		{Path: "usr/local/", Mode: 0o755},
		{Path: "usr/local/bin/", Mode: 0o755},
		{Path: "usr/local/bin/regatta", Mode: 0o755, Source: binary},
	}
}
