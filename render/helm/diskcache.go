package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// diskCache stores indexes by URL and archives by digest. Writes go to a
// temporary file renamed into place, so concurrent renders and processes
// never see a partial file.
type diskCache struct {
	dir string
}

func (c diskCache) indexPath(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.dir, "index", hex.EncodeToString(sum[:])+".yaml")
}

// archivePath is where an archive with digest "sha256:<hex>" is kept;
// kind separates repository archives from OCI manifests.
func (c diskCache) archivePath(kind, digest string) string {
	return filepath.Join(c.dir, kind, strings.TrimPrefix(digest, "sha256:")+".tgz")
}

// readFresh returns the file when it is younger than maxAge.
func (c diskCache) readFresh(p string, maxAge time.Duration, now time.Time) ([]byte, bool) {
	st, err := os.Stat(p)
	if err != nil || now.Sub(st.ModTime()) > maxAge {
		return nil, false
	}
	data, err := os.ReadFile(p)
	return data, err == nil
}

// readArchive returns a cached archive whose content still has digest.
func (c diskCache) readArchive(kind, digest string) ([]byte, bool) {
	if digest == "" {
		return nil, false
	}
	p := c.archivePath(kind, digest)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	if kind == archiveKindRepo && sha256Digest(data) != digest {
		_ = os.Remove(p) // corrupted: fetch again
		return nil, false
	}
	return data, true
}

func (c diskCache) write(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// archive kinds (cache subfolders).
const (
	archiveKindRepo = "charts"
	archiveKindOCI  = "oci"
)

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// normalizeDigest accepts "<hex>" or "sha256:<hex>" as an index gives it.
func normalizeDigest(d string) string {
	d = strings.ToLower(strings.TrimSpace(d))
	if d == "" || strings.HasPrefix(d, "sha256:") {
		return d
	}
	return "sha256:" + d
}
