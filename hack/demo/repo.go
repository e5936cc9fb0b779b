package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"filippo.io/age"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/render/sops"
)

// prepareRepo copies the example into work/fleet-infra, writes each
// cluster's kubeconfig Secret SOPS-encrypted with a fresh demo age key, and
// commits it all to a new local Git repository.
func prepareRepo(example, work string, env *testenv.Env) (repoDir, keyFile string, err error) {
	if err := os.RemoveAll(work); err != nil {
		return "", "", err
	}
	repoDir, keyFile = filepath.Join(work, "fleet-infra"), filepath.Join(work, "age.key")
	if err := copyTree(example, repoDir); err != nil {
		return "", "", err
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", "", err
	}
	key := fmt.Sprintf("# demo key, made by make demo\n# public key: %s\n%s\n", id.Recipient(), id)
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		return "", "", err
	}
	sopsConfig := fmt.Sprintf("creation_rules:\n- path_regex: clusters/.*\\.sops\\.yaml$\n  encrypted_regex: '%s'\n  age: %s\n", sops.SecretRegex, id.Recipient())
	if err := os.WriteFile(filepath.Join(repoDir, ".sops.yaml"), []byte(sopsConfig), 0o644); err != nil {
		return "", "", err
	}
	for _, c := range env.Clusters() {
		if err := writeKubeconfigSecret(repoDir, c, id.Recipient().String()); err != nil {
			return "", "", err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fleet-infra: initial fleet"}} {
		if err := git(repoDir, args...); err != nil {
			return "", "", err
		}
	}
	return repoDir, keyFile, nil
}

func writeKubeconfigSecret(repoDir string, c *testenv.Cluster, recipient string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-kubeconfig\n  namespace: regatta-system\nstringData:\n  value: |\n", c.Name())
	for _, line := range strings.Split(strings.TrimRight(string(c.Kubeconfig()), "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	file := filepath.Join(repoDir, "clusters", c.Name(), "kubeconfig.sops.yaml")
	enc, err := sops.Encrypt(file, []byte(b.String()), sops.SecretRegex, []string{recipient})
	if err != nil {
		return err
	}
	return os.WriteFile(file, enc, 0o644)
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Demo", "GIT_AUTHOR_EMAIL=demo@example.com",
		"GIT_COMMITTER_NAME=Demo", "GIT_COMMITTER_EMAIL=demo@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
