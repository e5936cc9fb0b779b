package bench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1" //nolint:gosec // a Git-style revision name, not a security digest
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FluxArtifact is a source artifact as source-controller stores it: a
// gzipped tarball of the tree, its digest and the revision it names.
type FluxArtifact struct {
	Data []byte
	// Digest is "sha256:<hex>" of Data, which kustomize-controller checks.
	Digest string
	// Revision is "main@sha1:<hex>", a Git revision's form (the hex is the
	// tarball's SHA-1: the tree has no commit).
	Revision string
}

// NewFluxArtifact packs files (path: content) into an artifact, folders
// before their files, in a stable order.
func NewFluxArtifact(files map[string]string) (FluxArtifact, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := slices.Sorted(maps.Keys(files))
	dirs := map[string]bool{}
	for _, name := range names {
		if err := writeTarFile(tw, dirs, name, files[name]); err != nil {
			return FluxArtifact{}, err
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return FluxArtifact{}, err
	}
	sum, rev := sha256.Sum256(buf.Bytes()), sha1.Sum(buf.Bytes()) //nolint:gosec // see the import
	return FluxArtifact{Data: buf.Bytes(), Digest: "sha256:" + hex.EncodeToString(sum[:]),
		Revision: "main@sha1:" + hex.EncodeToString(rev[:])}, nil
}

// writeTarFile writes a file's missing parent folders, then the file.
func writeTarFile(tw *tar.Writer, dirs map[string]bool, name, content string) error {
	var parents []string
	for d := path.Dir(name); d != "." && !dirs[d]; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for _, d := range slices.Backward(parents) {
		dirs[d] = true
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := io.WriteString(tw, content)
	return err
}

// installCRDs applies every CRD of the YAML files in dirs and waits until
// each is Established.
func installCRDs(ctx context.Context, k client.Client, dirs []string) error {
	var crds []*unstructured.Unstructured
	for _, dir := range dirs {
		objs, err := readYAMLDir(dir)
		if err != nil {
			return err
		}
		crds = append(crds, objs...)
	}
	if len(crds) == 0 {
		return fmt.Errorf("no CRDs in %s", strings.Join(dirs, ", "))
	}
	if err := applyAll(ctx, k, crds); err != nil {
		return err
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, k, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// readYAMLDir decodes every object of the .yaml files in dir.
func readYAMLDir(dir string) ([]*unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			if len(m) > 0 {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out, nil
}

func waitEstablished(ctx context.Context, k client.Client, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		err := k.Get(ctx, client.ObjectKey{Name: name}, crd)
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
