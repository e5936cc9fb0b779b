package sops

import (
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"regexp"
	"strings"
	"time"
)

// macOnlyEncryptedInit is sha256("sops"), sops' initial MAC input when
// mac_only_encrypted is set.
var macOnlyEncryptedInit = sha256.Sum256([]byte("sops"))

// walker decrypts (or encrypts) a tree in place and computes its MAC the
// way sops does: every scalar in document order, decrypted when the file's
// rule says it is encrypted, hashed as sops' ToBytes gives it.
type walker struct {
	m       *metadata
	key     []byte
	encrypt bool
	mac     hash.Hash
	unencRe *regexp.Regexp
	encRe   *regexp.Regexp
}

func newWalker(m *metadata, key []byte, encrypt bool) *walker {
	w := &walker{m: m, key: key, encrypt: encrypt, mac: sha512.New()}
	// sops ignores a regexp that does not compile (it never matches).
	w.unencRe, _ = regexp.Compile(m.UnencryptedRegex)
	w.encRe, _ = regexp.Compile(m.EncryptedRegex)
	if m.MACOnlyEncrypted {
		w.mac.Write(macOnlyEncryptedInit[:])
	}
	return w
}

// decryptTree decrypts the documents in place and returns their MAC
// (upper-case hex).
func decryptTree(docs []*node, m *metadata, key []byte) (string, error) {
	return newWalker(m, key, false).all(docs)
}

// encryptTree encrypts the documents in place and returns the MAC of their
// plaintext.
func encryptTree(docs []*node, m *metadata, key []byte) (string, error) {
	return newWalker(m, key, true).all(docs)
}

func (w *walker) all(docs []*node) (string, error) {
	for _, d := range docs {
		if err := w.walk(d, nil); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%X", w.mac.Sum(nil)), nil
}

func (w *walker) walk(n *node, path []string) error {
	switch n.kind {
	case mappingNode:
		for i, k := range n.keys {
			if err := w.walk(n.items[i], append(path[:len(path):len(path)], k)); err != nil {
				return err
			}
		}
	case sequenceNode:
		for _, it := range n.items {
			if err := w.walk(it, path); err != nil {
				return err
			}
		}
	default:
		return w.leaf(n, path)
	}
	return nil
}

func (w *walker) leaf(n *node, path []string) error {
	if n.value == nil {
		return nil
	}
	if !walkable(n.value) {
		return &malformedError{err: fmt.Errorf("a value of unsupported type %T", n.value)}
	}
	encrypted := w.shouldBeEncrypted(path)
	additional := strings.Join(path, ":") + ":"
	if w.encrypt {
		if err := w.hash(n.value, encrypted); err != nil || !encrypted {
			return err
		}
		sealed, err := encryptValue(n.value, w.key, additional)
		n.value = sealed
		return err
	}
	if encrypted {
		s, ok := n.value.(string)
		if !ok {
			return &integrityError{detail: "a value that should be encrypted is not (the file was changed after it was encrypted)"}
		}
		v, err := decryptValue(s, w.key, additional)
		if err != nil {
			return valueError(err)
		}
		n.value = v
	}
	return w.hash(n.value, encrypted)
}

// hash adds a plaintext value to the MAC (comments never are).
func (w *walker) hash(v any, encrypted bool) error {
	if _, isComment := v.(comment); isComment || (w.m.MACOnlyEncrypted && !encrypted) {
		return nil
	}
	b, err := macBytes(v)
	if err != nil {
		return &malformedError{err: err}
	}
	w.mac.Write(b)
	return nil
}

func walkable(v any) bool {
	switch v.(type) {
	case string, int, float64, bool, []byte, time.Time:
		return true
	}
	return false
}

func valueError(err error) error {
	if errors.Is(err, errNotEncValue) {
		return &integrityError{detail: "a value that should be encrypted is not in sops' format (the file was changed after it was encrypted)"}
	}
	return &integrityError{detail: "a value cannot be decrypted with the data key (the file was changed after it was encrypted)"}
}

// shouldBeEncrypted is sops' rule for a value at path (comment rules are
// refused when the metadata is read).
func (w *walker) shouldBeEncrypted(path []string) bool {
	m := w.m
	encrypted := true
	if m.UnencryptedSuffix != "" && anyMatch(path, func(p string) bool { return strings.HasSuffix(p, m.UnencryptedSuffix) }) {
		encrypted = false
	}
	if m.EncryptedSuffix != "" {
		encrypted = anyMatch(path, func(p string) bool { return strings.HasSuffix(p, m.EncryptedSuffix) })
	}
	if m.UnencryptedRegex != "" && w.unencRe != nil && anyMatch(path, w.unencRe.MatchString) {
		encrypted = false
	}
	if m.EncryptedRegex != "" {
		encrypted = w.encRe != nil && anyMatch(path, w.encRe.MatchString)
	}
	return encrypted
}

func anyMatch(path []string, match func(string) bool) bool {
	for _, p := range path {
		if match(p) {
			return true
		}
	}
	return false
}
