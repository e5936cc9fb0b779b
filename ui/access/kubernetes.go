package access

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TokenCookie holds a Kubernetes token given at the login form: browsers
// cannot set an Authorization header on a navigation.
const TokenCookie = "regatta_token"

// kubeAuth reviews bearer tokens with the management cluster.
type kubeAuth struct {
	client kubernetes.Interface
}

// review asks the API server who the token is; errBadCredentials when it
// does not know it.
func (k *kubeAuth) review(ctx context.Context, token string) (authenticationv1.UserInfo, error) {
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	res, err := k.client.AuthenticationV1().TokenReviews().Create(ctx, tr, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("TokenReview: %w", err)
	}
	if !res.Status.Authenticated {
		return authenticationv1.UserInfo{}, errBadCredentials
	}
	return res.Status.User, nil
}

// bearerToken is the request's token: the Authorization header's, else
// the login form's cookie.
func bearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
		return ""
	}
	if c, err := r.Cookie(TokenCookie); err == nil {
		return c.Value
	}
	return ""
}

// decideToken reviews the request's token, from the cache when it was
// reviewed within the cache's TTL.
func (g *Gate) decideToken(r *http.Request) (decision, error) {
	token := bearerToken(r)
	if token == "" {
		return decision{}, errNoCredentials
	}
	return g.decideTokenValue(r.Context(), token)
}

// decideTokenValue reviews token and authorises its user and groups.
func (g *Gate) decideTokenValue(ctx context.Context, token string) (decision, error) {
	key := sha256.Sum256([]byte("token\x00" + token))
	return g.cache.get(key, func() (decision, error) {
		u, err := g.kube.review(ctx, token)
		if err != nil {
			return decision{}, err
		}
		return g.grant(ctx, u.Username, u.Groups)
	})
}

// grant authorises a user and groups.
func (g *Gate) grant(ctx context.Context, user string, groups []string) (decision, error) {
	v, err := g.grants.grant(ctx, user, groups)
	if err != nil {
		return decision{}, err
	}
	v.Name = user
	return decision{user: user, groups: groups, viewer: v}, nil
}

// grants decides what a user and groups may see.
type grants interface {
	grant(ctx context.Context, user string, groups []string) (Viewer, error)
	// advice is what to grant a reader allowed nothing, for the 403 page.
	advice() advice
}

// reviewGrants asks the management cluster with SubjectAccessReviews.
type reviewGrants struct {
	client  kubernetes.Interface
	fleet   string
	tenants func() []string
}

func newReviewGrants(opts Options) *reviewGrants {
	return &reviewGrants{client: opts.Kube, fleet: opts.FleetName, tenants: opts.Tenants}
}

// reviewsInFlight bounds the tenants' reviews asked at once.
const reviewsInFlight = 8

func (s *reviewGrants) grant(ctx context.Context, user string, groups []string) (Viewer, error) {
	ok, err := s.allowed(ctx, user, groups, ResourceFleets, s.fleet)
	if err != nil || ok {
		return Viewer{Fleet: ok}, err
	}
	tenants := s.tenants()
	seen := make([]bool, len(tenants))
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(reviewsInFlight)
	for i, t := range tenants {
		eg.Go(func() (err error) {
			seen[i], err = s.allowed(ctx, user, groups, ResourceTenants, t)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return Viewer{}, err
	}
	var v Viewer
	for i, t := range tenants {
		if seen[i] {
			v.Tenants = append(v.Tenants, t)
		}
	}
	return v, nil
}

// allowed asks whether user and groups may get resource/name of the
// group regatta.dev.
func (s *reviewGrants) allowed(ctx context.Context, user string, groups []string, resource, name string) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "get", Group: Group, Resource: resource, Name: name,
		},
	}}
	res, err := s.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview of %s/%s for %s: %w", resource, name, user, err)
	}
	return res.Status.Allowed, nil
}

func (s *reviewGrants) advice() advice { return advice{Fleet: s.fleet, RBAC: true} }

// groupGrants maps OIDC groups to what they see (no management cluster).
type groupGrants struct {
	fleet   []string
	tenants map[string][]string
}

func (s *groupGrants) grant(_ context.Context, _ string, groups []string) (Viewer, error) {
	if intersects(s.fleet, groups) {
		return Viewer{Fleet: true}, nil
	}
	var v Viewer
	for _, t := range sortedKeys(s.tenants) {
		if intersects(s.tenants[t], groups) {
			v.Tenants = append(v.Tenants, t)
		}
	}
	return v, nil
}

func (s *groupGrants) advice() advice { return advice{} }
