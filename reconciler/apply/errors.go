package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// PairError is an error of one (profile, cluster) pass:
// "cluster prod-eu-1: profile kyverno: ...".
type PairError struct {
	Cluster string
	Profile string
	Err     error
}

func (e *PairError) Error() string {
	return fmt.Sprintf("cluster %s: profile %s: %v", e.Cluster, e.Profile, e.Err)
}

func (e *PairError) Unwrap() error { return e.Err }

// AddonError is an error of one add-on (step) of a profile.
type AddonError struct {
	Addon string
	// Phase and Weight name a Helm hook step; empty Phase is the release.
	Phase  Phase
	Weight int
	Err    error
}

func (e *AddonError) Error() string {
	if e.Phase == PhasePre || e.Phase == PhasePost {
		return fmt.Sprintf("add-on %s (%s hooks, weight %d): %v", e.Addon, e.Phase, e.Weight, e.Err)
	}
	if e.Phase == PhaseNamespace {
		return fmt.Sprintf("add-on %s (release namespace): %v", e.Addon, e.Err)
	}
	return fmt.Sprintf("add-on %s: %v", e.Addon, e.Err)
}

func (e *AddonError) Unwrap() error { return e.Err }

// ObjectError is an operation on one object that failed:
// "Deployment/ns/name delete failed: ...".
type ObjectError struct {
	Object ObjectRef
	// Op is the operation: apply, delete, get, unlabel.
	Op  string
	Err error
}

func (e *ObjectError) Error() string {
	return fmt.Sprintf("%s %s failed: %v", e.Object, e.Op, e.Err)
}

func (e *ObjectError) Unwrap() error { return e.Err }

// UnreachableError means a cluster's API server did not answer in time or
// refused the connection.
type UnreachableError struct {
	Cluster string
	Err     error
}

// Error leaves the cluster's name to the enclosing error (PairError, or
// the "cluster NAME:" prefix of the Cluster methods).
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("API server unreachable: %v", e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// KubeconfigError is a kubeconfig that cannot be used. It never holds
// credential values.
type KubeconfigError struct {
	Cluster string
	Reason  string
	// Exec is true for a kubeconfig refused because it would run a program
	// or read a file on the daemon's host; errors.Is(err, ErrExecNotAllowed).
	Exec bool
	Err  error
}

func (e *KubeconfigError) Error() string {
	msg := fmt.Sprintf("cluster %s: %s", e.Cluster, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *KubeconfigError) Unwrap() error { return e.Err }

// Is reports whether target is ErrExecNotAllowed and this is such a refusal.
func (e *KubeconfigError) Is(target error) bool { return e.Exec && target == ErrExecNotAllowed }

// ErrExecNotAllowed is wrapped by the KubeconfigError of a kubeconfig that
// uses an exec credential plugin, an auth-provider or a host file while
// ClientOptions.AllowExec is off.
var ErrExecNotAllowed = errors.New("kubeconfig credential plugins are not allowed")

// ConflictError says that another profile owns an object this profile renders.
type ConflictError struct {
	Object    ObjectRef
	Owner     string
	OwnerTier int
	Tier      int
	// OwnerFleet is set when another fleet owns the object.
	OwnerFleet string
}

func (e *ConflictError) Error() string {
	if e.OwnerFleet != "" {
		return fmt.Sprintf("%s is owned by profile %s of %s; a fleet never takes over another fleet's objects",
			e.Object, e.Owner, e.OwnerFleet)
	}
	return fmt.Sprintf("%s is owned by profile %s (tier %d); this profile's tier %d does not take it over",
		e.Object, e.Owner, e.OwnerTier, e.Tier)
}

// HealthError says that the objects of an add-on did not become healthy.
type HealthError struct {
	// Degraded is true when an object failed (kstatus Failed or a health
	// check's Degraded), false when the wait timed out.
	Degraded bool
	Timeout  time.Duration
	// Unhealthy lists "Kind/ns/name: Status: message" per object.
	Unhealthy []string
	// Err is the wait's own error.
	Err error
}

func (e *HealthError) Error() string {
	if len(e.Unhealthy) == 0 {
		return "health check failed: " + e.Err.Error()
	}
	if e.Degraded {
		return "not healthy: " + strings.Join(e.Unhealthy, "; ")
	}
	return fmt.Sprintf("not healthy within %s: %s", e.Timeout, strings.Join(e.Unhealthy, "; "))
}

func (e *HealthError) Unwrap() error { return e.Err }

// unreachable wraps err in an *UnreachableError when it is a transport
// failure (refused, timed out, DNS, TLS handshake) rather than an answer, and
// the caller's context is still live (a cancelled pass is not a cluster fault).
func unreachable(ctx context.Context, cluster string, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ue *UnreachableError
	if errors.As(err, &ue) || !isTransportError(err) {
		return err
	}
	return &UnreachableError{Cluster: cluster, Err: err}
}

func isTransportError(err error) bool {
	var uerr *url.Error
	var nerr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	case errors.As(err, &nerr) && nerr.Timeout():
		return true
	case errors.As(err, &uerr):
		return true
	}
	// client-go flattens some transport errors into strings.
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "Client.Timeout exceeded")
}
