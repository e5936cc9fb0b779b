package access

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
)

// Flags are the command-line flags of the UI's access, shared by
// `regatta ui` and `regatta run --ui-addr`.
type Flags struct {
	Auth                 string
	FleetName            string
	OIDCIssuer           string
	OIDCClientID         string
	OIDCClientSecretFile string
	OIDCRedirectURL      string
	OIDCScopes           []string
	OIDCUserClaim        string
	OIDCGroupsClaim      string
	OIDCFleetGroups      []string
	OIDCTenantGroups     []string
	CookieKeyFile        string
}

// Register adds the flags to fl.
func (f *Flags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.Auth, "ui-auth", ModeNone, "who may read the web UI: none (anyone; loopback addresses only), kubernetes (bearer token: TokenReview and SubjectAccessReview in the management cluster) or oidc (OpenID Connect login)")
	fl.StringVar(&f.FleetName, "ui-fleet-name", DefaultFleetName, "name of the fleets.regatta.dev resource whose get right shows the whole fleet")
	fl.StringVar(&f.OIDCIssuer, "ui-oidc-issuer", "", "OpenID provider's issuer URL (--ui-auth oidc)")
	fl.StringVar(&f.OIDCClientID, "ui-oidc-client-id", "", "OAuth2 client ID of the UI at the OpenID provider")
	fl.StringVar(&f.OIDCClientSecretFile, "ui-oidc-client-secret-file", "", "file holding the OAuth2 client secret (empty: a public client, PKCE only)")
	fl.StringVar(&f.OIDCRedirectURL, "ui-oidc-redirect-url", "", "the UI's callback as registered at the provider: https://<UI host>/-/callback")
	fl.StringSliceVar(&f.OIDCScopes, "ui-oidc-scopes", []string{"profile", "email"}, "scopes asked for besides openid (add groups for providers such as Dex)")
	fl.StringVar(&f.OIDCUserClaim, "ui-oidc-user-claim", "email", "ID token claim naming the user")
	fl.StringVar(&f.OIDCGroupsClaim, "ui-oidc-groups-claim", "groups", "ID token claim listing the user's groups")
	fl.StringSliceVar(&f.OIDCFleetGroups, "ui-oidc-fleet-groups", nil, "OIDC groups that see the whole fleet; with this flag or --ui-oidc-tenant-groups the groups decide, without them the management cluster's RBAC")
	fl.StringSliceVar(&f.OIDCTenantGroups, "ui-oidc-tenant-groups", nil, "TENANT=GROUP: members of GROUP see tenant TENANT (repeatable)")
	fl.StringVar(&f.CookieKeyFile, "ui-cookie-key-file", "", "file holding the key (at least 32 bytes) signing the UI's session cookies; empty: generated at start, so a restart logs everyone out")
}

// Options builds the Gate's options for a UI listening on addr; kube is
// the management cluster (nil without one), tenants the tenants the UI
// knows (status.Tenants of the newest snapshot). It reads the files the
// flags name.
func (f *Flags) Options(addr string, kube kubernetes.Interface, tenants func() []string, log *slog.Logger) (Options, error) {
	o := Options{Mode: f.Auth, ListenAddr: addr, FleetName: f.FleetName, Tenants: tenants, Log: log}
	// OIDC readers are authorised by the group flags when given, else by
	// the management cluster's RBAC.
	groups := len(f.OIDCFleetGroups) > 0 || len(f.OIDCTenantGroups) > 0
	if f.Auth == ModeKubernetes || f.Auth == ModeOIDC && !groups {
		o.Kube = kube
	}
	if f.Auth != ModeOIDC {
		return o, nil
	}
	tg, err := parseTenantGroups(f.OIDCTenantGroups)
	if err != nil {
		return Options{}, err
	}
	o.OIDC = OIDCOptions{Issuer: f.OIDCIssuer, ClientID: f.OIDCClientID, RedirectURL: f.OIDCRedirectURL,
		Scopes: f.OIDCScopes, UserClaim: f.OIDCUserClaim, GroupsClaim: f.OIDCGroupsClaim,
		FleetGroups: f.OIDCFleetGroups, TenantGroups: tg}
	if o.OIDC.ClientSecret, err = readSecret(f.OIDCClientSecretFile, "--ui-oidc-client-secret-file"); err != nil {
		return Options{}, err
	}
	key, err := readSecret(f.CookieKeyFile, "--ui-cookie-key-file")
	if key != "" {
		o.CookieKey = []byte(key)
	}
	return o, err
}

// readSecret reads a file's trimmed content ("" for no file).
func readSecret(file, flag string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return "", fmt.Errorf("%s: %s is empty", flag, file)
	}
	return string(b), nil
}

// parseTenantGroups reads TENANT=GROUP pairs.
func parseTenantGroups(pairs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, p := range pairs {
		t, g, ok := strings.Cut(p, "=")
		if !ok || t == "" || g == "" {
			return nil, fmt.Errorf("--ui-oidc-tenant-groups %q: want TENANT=GROUP", p)
		}
		out[t] = append(out[t], g)
	}
	return out, nil
}

// Gate builds the Gate the flags describe: Options, then New.
func (f *Flags) Gate(addr string, kube kubernetes.Interface, tenants func() []string, log *slog.Logger) (*Gate, error) {
	o, err := f.Options(addr, kube, tenants, log)
	if err != nil {
		return nil, err
	}
	return New(o)
}
