package app

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/render/sops"
)

// renderOptionFlags are the flags of every command that renders.
type renderOptionFlags struct {
	ageKeyFile       string
	allowRemoteBases bool
	allowURLPrefixes []string
	helmCacheDir     string
	helmPlainHTTP    bool
	helmWorker       helmWorkerFlags
}

func (r *renderOptionFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&r.ageKeyFile, "sops-age-key-file", "", "age identities for SOPS-encrypted files (default $SOPS_AGE_KEY_FILE)")
	fl.BoolVar(&r.allowRemoteBases, "allow-remote-bases", false, "let kustomizations load remote bases (git, https)")
	fl.StringArrayVar(&r.allowURLPrefixes, "allow-url-prefix", nil, "fetch charts and remote bases only from URLs starting with this prefix (repeat it for several); a URL under a prefix may also reach loopback and link-local addresses, which are refused otherwise")
	fl.StringVar(&r.helmCacheDir, "helm-cache-dir", "", "where chart indexes and archives are cached (default: the user cache dir)")
	fl.BoolVar(&r.helmPlainHTTP, "helm-plain-http", false, "talk to oci:// registries over plain HTTP (local registries only)")
	r.helmWorker.register(fl)
}

func (r *renderOptionFlags) renderer() (*render.Renderer, error) {
	keys, err := r.keyring()
	if err != nil {
		return nil, err
	}
	worker, err := r.helmWorker.options()
	if err != nil {
		return nil, err
	}
	policy := &netpolicy.Policy{AllowPrefixes: r.allowURLPrefixes}
	charts := helm.New(helm.Options{
		CacheDir:   r.helmCacheDir,
		PlainHTTP:  r.helmPlainHTTP,
		HTTPClient: policy.Client(),
		Worker:     worker,
	})
	return render.New(render.Options{
		Helm:             charts,
		Keys:             keys,
		AllowRemoteBases: r.allowRemoteBases,
		CheckURL:         policy.Check,
		// A daemon between commits holds no parsed schema; a command
		// ends before the release matters.
		SchemaIdleTimeout: render.DefaultSchemaIdleTimeout,
	}), nil
}

// keyring loads the age identities, or returns nil when none are configured.
func (r *renderOptionFlags) keyring() (*sops.Keyring, error) {
	path := r.ageKeyFile
	if path == "" {
		path = os.Getenv("SOPS_AGE_KEY_FILE")
	}
	if path == "" {
		return nil, nil
	}
	k, err := sops.LoadAgeKeyFile(path)
	if err != nil {
		return nil, usageError("--sops-age-key-file: %v", err)
	}
	return k, nil
}
