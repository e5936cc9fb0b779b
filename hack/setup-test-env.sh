#!/usr/bin/env bash
# Prepares this machine for regatta's tests against real Kubernetes API servers:
#   1. installs Debian's etcd-server when no `etcd` is on PATH (needs root or sudo);
#   2. builds kube-apiserver (several stamped versions), kubectl,
#      kube-controller-manager, kube-scheduler and kwok into bin/ with
#      hack/build-kube.sh (arguments are passed on to it).
# Safe to re-run: it does nothing that is already done.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { printf 'setup-test-env: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

install_etcd() {
  if command -v etcd >/dev/null; then
    log "etcd found: $(command -v etcd) ($(etcd --version 2>/dev/null | head -n1))"
    return
  fi
  command -v apt-get >/dev/null || die "etcd is missing and apt-get is not available: install etcd (3.4+) yourself"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "etcd is missing: run as root or install the etcd-server package"
    sudo=(sudo)
  fi
  log "etcd is missing: installing Debian package etcd-server"
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends etcd-server
  command -v etcd >/dev/null || die "etcd-server was installed but no etcd is on PATH"
  log "installed $(etcd --version 2>/dev/null | head -n1)"
}

install_etcd
"$here/build-kube.sh" "$@"
log "test environment ready"
