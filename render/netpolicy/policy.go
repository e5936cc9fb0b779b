// Package netpolicy decides which URLs a render may fetch: chart
// repositories, OCI registries and remote Kustomize bases named in the
// fleet repository. Profiles may be written by tenants, so a URL must not
// reach the daemon's own network neighbourhood: loopback, link-local
// (which holds the cloud metadata endpoints), the metadata names, and the
// unspecified address are refused unless a URL prefix allows them. With
// an allow list, only URLs under one of its prefixes are fetched at all.
package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ErrRefused is the error of every refused URL or address.
var ErrRefused = errors.New("refused by the URL policy")

// Policy is a URL allow list plus the internal-address rule. The zero
// Policy allows every URL except those reaching internal addresses.
type Policy struct {
	// AllowPrefixes: when not empty, a URL must start with one of them.
	// A URL under a prefix may also reach internal addresses.
	AllowPrefixes []string
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

// metadataHosts are cloud metadata endpoints reached by name.
var metadataHosts = map[string]bool{
	"metadata.google.internal": true, "metadata": true, "metadata.azure.internal": true,
	"instance-data": true, "instance-data.ec2.internal": true,
}

// allowedByPrefix reports whether raw is under an allow-list prefix, in
// the form it is written or, for an oci:// prefix, as the registry's
// requests are sent (requestPrefixes).
func (p *Policy) allowedByPrefix(raw string) bool {
	for _, pre := range p.AllowPrefixes {
		for _, form := range requestPrefixes(pre) {
			if form != "" && strings.HasPrefix(raw, form) {
				return true
			}
		}
	}
	return false
}

// requestPrefixes are the URL prefixes an allow-list prefix stands for.
// Profiles name registries as oci://HOST/REPOSITORY, but a registry is
// asked over HTTPS (or HTTP with --helm-plain-http) at
// https://HOST/v2/REPOSITORY/...: an oci:// prefix also allows those
// requests, and one that names only the registry (oci://HOST:PORT/)
// allows all of the host, its token endpoint included. Other prefixes
// stand for themselves.
func requestPrefixes(pre string) []string {
	rest, ok := strings.CutPrefix(pre, "oci://")
	if !ok || rest == "" {
		return []string{pre}
	}
	host, repo, slash := strings.Cut(rest, "/")
	tail := ""
	switch {
	case repo != "":
		tail = "/v2/" + repo
	case slash:
		tail = "/"
	}
	return []string{pre, "https://" + host + tail, "http://" + host + tail}
}

// Check decides on a URL before it is fetched: the allow list, then the
// host (a literal address, a metadata name, or what the name resolves to).
// Dialing is checked again by Transport, so a name that resolves
// differently later is still caught for HTTP.
func (p *Policy) Check(ctx context.Context, raw string) error {
	if p.allowedByPrefix(raw) {
		return nil
	}
	if len(p.AllowPrefixes) > 0 {
		return fmt.Errorf("%s: not under any --allow-url-prefix (%s): %w", redact(raw), strings.Join(p.AllowPrefixes, ", "), ErrRefused)
	}
	host, err := hostOf(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", redact(raw), err)
	}
	if err := p.checkHost(ctx, host); err != nil {
		return fmt.Errorf("%s: %w; allow it with --allow-url-prefix", redact(raw), err)
	}
	return nil
}

// checkHost refuses internal addresses and names that resolve to one.
func (p *Policy) checkHost(ctx context.Context, host string) error {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataHosts[host] || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("host %s is internal: %w", host, ErrRefused)
	}
	if addr, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return checkAddr(addr)
	}
	if addr, ok := inetAton(host); ok {
		// 2130706433, 0x7f.1, 017700000001: what the git CLI (and libc)
		// read as 127.0.0.1
		return checkAddr(addr)
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // the fetch reports the lookup failure itself
	}
	for _, a := range addrs {
		if err := checkAddr(a); err != nil {
			return fmt.Errorf("host %s: %w", host, err)
		}
	}
	return nil
}

// checkAddr refuses loopback, link-local (169.254.0.0/16 holds the cloud
// metadata endpoint 169.254.169.254), unspecified and multicast
// addresses, and the IPv6 metadata address of EC2.
func checkAddr(a netip.Addr) error {
	a = a.Unmap()
	kind := ""
	switch {
	case a.IsLoopback():
		kind = "a loopback address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		kind = "a link-local address (cloud metadata lives there)"
	case a.IsUnspecified():
		kind = "the unspecified address"
	case a.IsMulticast():
		kind = "a multicast address"
	case a == netip.MustParseAddr("fd00:ec2::254"):
		kind = "the EC2 metadata address"
	default:
		return nil
	}
	return fmt.Errorf("%s is %s: %w", a, kind, ErrRefused)
}

// hostOf extracts the host of a URL or of a Kustomize remote reference
// (git::https://..., git@host:org/repo, github.com/org/repo).
func hostOf(raw string) (string, error) {
	r := strings.TrimPrefix(strings.TrimSpace(raw), "git::")
	if !strings.Contains(r, "://") {
		if at := strings.Index(r, "@"); at >= 0 && at < strings.IndexAny(r+":", ":/") {
			r = r[at+1:] // scp style: user@host:path
		}
		host, _, _ := strings.Cut(r, "/")
		host, _, _ = strings.Cut(host, ":")
		if host == "" {
			return "", fmt.Errorf("no host in %q", raw)
		}
		return host, nil
	}
	u, err := url.Parse(r)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("no host in %q", redact(raw))
	}
	return u.Hostname(), nil
}

// redact removes user info from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// inetAton parses the IPv4 forms of BSD inet_aton that netip refuses: one
// to four parts, each decimal, octal (leading 0) or hex (0x); the last
// part fills the remaining bytes.
func inetAton(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		if err != nil || p == "" || strings.HasPrefix(p, "+") {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(32-8*(len(vals)-1)) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}
