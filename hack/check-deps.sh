#!/usr/bin/env bash
# Keeps the dependency direction of GUIDE.md §1: leaf packages import no
# regatta package above them, and nothing imports k8s.io/kubernetes.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/regatta-dev/regatta
fail=0
check() { # check PKG ALLOWED-PREFIX...
  local pkg=$1; shift
  [ -d "${pkg#./}" ] || return 0
  while read -r dep; do
    local ok=0
    for allowed in "$@"; do [[ $dep == "$mod/$allowed"* ]] && ok=1; done
    if [ $ok = 0 ]; then echo "deps-check: $pkg must not import $dep"; fail=1; fi
  done < <(go list -deps "$pkg/..." | grep "^$mod/" | grep -v "^$mod/${pkg#./}" || true)
}
check ./spec
check ./lua
check ./repo
check ./verify
check ./render spec
check ./reconciler/plan spec
check ./reconciler/apply spec
check ./reconciler/kubeconfig spec render/sops
check ./reconciler/events spec lua reconciler/apply
check ./reconciler/rollout spec
check ./reconciler/status/history repo
check ./reconciler/tenancy spec render
check ./reconciler/commitstatus reconciler/status
check ./ui/access
check ./ui/timeline repo reconciler/status ui
# the web UI reads status records and the status branch, never the daemon
check ./ui reconciler/status repo
check ./reconciler/diff spec render repo reconciler/rollout reconciler/plan reconciler/status reconciler/apply reconciler/classify reconciler/kubeconfig reconciler/tenancy lua
# lua/limits.go lowers gopher-lua's package-level MaxArrayIndex: only lua
# may run gopher-lua states (spec may use its parser).
if go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | grep -v '^'$mod'/lua ' | grep -q ' github.com/yuin/gopher-lua\( \|$\)'; then
  echo "deps-check: only lua may import github.com/yuin/gopher-lua (lua/limits.go sets its MaxArrayIndex)"; fail=1
fi
if go list -deps ./... | grep -q '^k8s.io/kubernetes/'; then
  echo "deps-check: the product must not depend on k8s.io/kubernetes"; fail=1
fi
# The idle daemon's memory (issue 30): with hack/build-tags (make exports
# them in GOFLAGS) regatta links neither gRPC's xDS stack nor sops' CLI
# version check.
tags=$(sed -e '/^#/d' -e '/^$/d' hack/build-tags | paste -sd, -)
if go list -tags "$tags" -deps ./cmd/regatta | grep -E -q '^(google.golang.org/grpc/xds|github.com/envoyproxy/|github.com/getsops/sops/v3/version$)'; then
  echo "deps-check: cmd/regatta links gRPC xDS, Envoy or sops/version: see hack/build-tags"; fail=1
fi
exit $fail
