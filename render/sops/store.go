package sops

import (
	"bytes"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/stores/dotenv"
	"github.com/getsops/sops/v3/stores/ini"
	"github.com/getsops/sops/v3/stores/json"
	"github.com/getsops/sops/v3/stores/yaml"
)

// store is the part of a sops store Decrypt and Encrypt use.
type store interface {
	LoadEncryptedFile(in []byte) (gosops.Tree, error)
	LoadPlainFile(in []byte) (gosops.TreeBranches, error)
	EmitEncryptedFile(gosops.Tree) ([]byte, error)
	EmitPlainFile(gosops.TreeBranches) ([]byte, error)
}

// storeFor picks the store the sops CLI picks for the file name, with the
// CLI's default store settings. A file the CLI would read as binary whose
// content is an encrypted YAML or dotenv document (a Secret saved as
// "kubeconfig", say) is read as that document: the binary store's
// encrypted form is JSON.
func storeFor(file string, data []byte) store {
	c := config.NewStoresConfig()
	f := formats.FormatForPath(file)
	if f == formats.Binary && data != nil && !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		f = formats.Yaml
		if isDotenv(data) {
			f = formats.Dotenv
		}
	}
	switch f {
	case formats.Yaml:
		return yaml.NewStore(&c.YAML)
	case formats.Json:
		return json.NewStore(&c.JSON)
	case formats.Dotenv:
		return dotenv.NewStore(&c.Dotenv)
	case formats.Ini:
		return ini.NewStore(&c.INI)
	}
	return json.NewBinaryStore(&c.JSONBinary)
}
