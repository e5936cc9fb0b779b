package repo

import (
	"bytes"
	"io"
	"io/fs"
	"time"
)

// fileInfo is the fs.FileInfo of a tree entry. ModTime is the commit time.
type fileInfo struct {
	name    string
	mode    fs.FileMode
	size    int64
	modTime time.Time
}

func (i *fileInfo) Name() string       { return i.name }
func (i *fileInfo) Size() int64        { return i.size }
func (i *fileInfo) Mode() fs.FileMode  { return i.mode }
func (i *fileInfo) ModTime() time.Time { return i.modTime }
func (i *fileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *fileInfo) Sys() any           { return nil }

// dirEntry is an fs.DirEntry; Info reads the object size lazily.
type dirEntry struct {
	t *Tree
	n node
}

func (e *dirEntry) Name() string      { return e.n.name }
func (e *dirEntry) IsDir() bool       { return e.Type().IsDir() }
func (e *dirEntry) Type() fs.FileMode { return fsMode(e.n.mode).Type() }

func (e *dirEntry) Info() (fs.FileInfo, error) {
	size, err := e.t.size(e.n)
	if err != nil {
		return nil, err
	}
	return e.t.info(e.n, size), nil
}

// blobFile is an open file: its content is read whole when opened.
type blobFile struct {
	info *fileInfo
	r    *bytes.Reader
}

func newBlobFile(info *fileInfo, data []byte) *blobFile {
	return &blobFile{info: info, r: bytes.NewReader(data)}
}

func (f *blobFile) Stat() (fs.FileInfo, error)                { return f.info, nil }
func (f *blobFile) Read(p []byte) (int, error)                { return f.r.Read(p) }
func (f *blobFile) ReadAt(p []byte, off int64) (int, error)   { return f.r.ReadAt(p, off) }
func (f *blobFile) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }
func (f *blobFile) Close() error                              { return nil }

// dirFile is an open folder.
type dirFile struct {
	info    *fileInfo
	entries []fs.DirEntry
	offset  int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Close() error               { return nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errIsDir}
}

// ReadDir follows fs.ReadDirFile: n <= 0 returns all remaining entries.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.offset:]
	if n <= 0 {
		d.offset = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.offset += n
	return rest[:n], nil
}
