package app

import (
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/render/sops"
)

// renderOptionFlags are the flags of every command that renders.
type renderOptionFlags struct {
	ageKeyFile       string
	gnupgHome        string
	keyServices      []string
	localKeyTypes    []string
	allowRemoteBases bool
	allowURLPrefixes []string
	helmCacheDir     string
	helmPlainHTTP    bool
	helmWorker       helmWorkerFlags
	programWorker    programWorkerFlags
}

func (r *renderOptionFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&r.ageKeyFile, "sops-age-key-file", "", "age identities for SOPS-encrypted files (default $SOPS_AGE_KEY_FILE; $SOPS_AGE_KEY adds identities inline)")
	fl.StringVar(&r.gnupgHome, "sops-gnupg-home", "", "GnuPG home whose secret keys decrypt PGP-encrypted SOPS files (default $GNUPGHOME, else ~/.gnupg)")
	fl.StringArrayVar(&r.keyServices, "sops-keyservice", nil, "a sops key service to ask after the local one, tcp://host:port or unix:///path (repeat it for several; default $SOPS_KEYSERVICE, comma-separated)")
	fl.StringSliceVar(&r.localKeyTypes, "sops-local-key-types", []string{"all"}, "key types decrypted in this process: all, none, or some of "+strings.Join(sops.KeyTypes, ",")+" (the others go to --sops-keyservice)")
	fl.BoolVar(&r.allowRemoteBases, "allow-remote-bases", false, "let kustomizations load remote bases (git, https)")
	registerAllowURLPrefix(fl, &r.allowURLPrefixes)
	fl.StringVar(&r.helmCacheDir, "helm-cache-dir", "", "where chart indexes and archives are cached (default: the user cache dir)")
	fl.BoolVar(&r.helmPlainHTTP, "helm-plain-http", false, "talk to oci:// registries over plain HTTP (local registries only)")
	r.helmWorker.register(fl)
	r.programWorker.register(fl)
}

func registerAllowURLPrefix(fl *pflag.FlagSet, p *[]string) {
	fl.StringArrayVar(p, "allow-url-prefix", nil, "fetch charts, OCI artifacts, remote bases and schema references only from URLs starting with this prefix (repeat it for several; a registry as oci://HOST:PORT/ or http(s)://HOST:PORT/); a URL under a prefix may also reach loopback and link-local addresses, which are refused otherwise")
}

func (r *renderOptionFlags) renderer() (*render.Renderer, error) {
	charts, err := r.charts()
	if err != nil {
		return nil, err
	}
	return r.rendererWith(charts)
}

// charts builds the chart renderer: its worker processes end with Close
// (or after --helm-render-idle-timeout).
func (r *renderOptionFlags) charts() (*helm.Renderer, error) {
	worker, err := r.helmWorker.options()
	if err != nil {
		return nil, err
	}
	policy := &netpolicy.Policy{AllowPrefixes: r.allowURLPrefixes}
	return helm.New(helm.Options{
		CacheDir:   r.helmCacheDir,
		PlainHTTP:  r.helmPlainHTTP,
		HTTPClient: policy.Client(),
		Worker:     worker,
	}), nil
}

func (r *renderOptionFlags) rendererWith(charts *helm.Renderer) (*render.Renderer, error) {
	keys, err := r.keyring()
	if err != nil {
		return nil, err
	}
	programs, err := r.programWorker.pool()
	if err != nil {
		return nil, err
	}
	policy := &netpolicy.Policy{AllowPrefixes: r.allowURLPrefixes}
	return render.New(render.Options{
		Helm:             charts,
		Sandbox:          programs,
		OCI:              oci.New(oci.Options{HTTPClient: policy.Client(), PlainHTTP: r.helmPlainHTTP}),
		Keys:             keys,
		AllowRemoteBases: r.allowRemoteBases,
		CheckURL:         policy.Check,
		// A daemon between commits holds no parsed schema; a command
		// ends before the release matters.
		SchemaIdleTimeout: render.DefaultSchemaIdleTimeout,
	}), nil
}

// keyring builds the SOPS keyring: age identities from --sops-age-key-file
// ($SOPS_AGE_KEY_FILE) and $SOPS_AGE_KEY, PGP keys from the GnuPG home,
// the cloud key types with the environment's credentials, and the key
// services. It is never nil: keys that need no configuration (a
// workload identity, a key service) are always available.
func (r *renderOptionFlags) keyring() (*sops.Keyring, error) {
	path := r.ageKeyFile
	if path == "" {
		path = os.Getenv("SOPS_AGE_KEY_FILE")
	}
	var ages []byte
	if path != "" {
		data, err := sops.ReadAgeKeyFile(path)
		if err != nil {
			return nil, usageError("--sops-age-key-file: %v", err)
		}
		ages = data
	}
	if inline := os.Getenv("SOPS_AGE_KEY"); inline != "" {
		ages = append(append(ages, '\n'), inline...)
	}
	services := r.keyServices
	if len(services) == 0 && os.Getenv("SOPS_KEYSERVICE") != "" {
		services = strings.Split(os.Getenv("SOPS_KEYSERVICE"), ",")
	}
	k, err := sops.New(sops.Options{
		AgeKeys:       ages,
		GnuPGHome:     r.gnupgHome,
		GPGExec:       os.Getenv("SOPS_GPG_EXEC"),
		KeyServices:   services,
		LocalKeyTypes: localKeyTypes(r.localKeyTypes),
	})
	if err != nil {
		return nil, usageError("SOPS keys: %v", err)
	}
	return k, nil
}

// localKeyTypes turns --sops-local-key-types into sops.Options'
// LocalKeyTypes: nil for all, empty for none.
func localKeyTypes(flag []string) []string {
	out := []string{}
	for _, t := range flag {
		switch t = strings.TrimSpace(t); t {
		case "all":
			return nil
		case "none", "":
		default:
			out = append(out, t)
		}
	}
	return out
}
