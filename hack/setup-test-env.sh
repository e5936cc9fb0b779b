#!/usr/bin/env bash
# Prepares this machine for regatta's tests against real Kubernetes API servers:
#   1. installs Debian's etcd-server when no `etcd` is on PATH (needs root or sudo);
#   2. installs Debian's gnupg when no `gpg` is on PATH (SOPS PGP tests,
#      signed commits) and openssh-client when no `ssh-keygen` is (SSH
#      signed commits), and chromium when no `chromium` is (the web UI's
#      browser tests through internal/browser; REGATTA_CHROMIUM names
#      another binary);
#   3. builds the sops CLI (github.com/getsops/sops/v3/cmd/sops at
#      $SOPS_VERSION) from the Go module proxy into bin/sops: its own
#      module, so its dependencies stay out of regatta's go.mod;
#   4. builds kube-apiserver (several stamped versions), kubectl,
#      kube-controller-manager and kube-scheduler (stamped per version in
#      $CONTROL_PLANE_VERSIONS) and kwok into bin/ with hack/build-kube.sh
#      (arguments are passed on to it).
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

# apt_install PACKAGE: installs a Debian package (needs root or sudo).
apt_install() {
  command -v apt-get >/dev/null || die "$1 is missing and apt-get is not available: install it yourself"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "$1 is missing: run as root or install the $1 package"
    sudo=(sudo)
  fi
  log "$1 is missing: installing Debian package $1"
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$1"
}

install_gpg() {
  if command -v gpg >/dev/null; then
    log "gpg found: $(command -v gpg) ($(gpg --version | head -n1))"
    return
  fi
  apt_install gnupg
  command -v gpg >/dev/null || die "gnupg was installed but no gpg is on PATH"
}

install_ssh_keygen() {
  if command -v ssh-keygen >/dev/null; then
    log "ssh-keygen found: $(command -v ssh-keygen)"
    return
  fi
  apt_install openssh-client
  command -v ssh-keygen >/dev/null || die "openssh-client was installed but no ssh-keygen is on PATH"
}

install_chromium() {
  local bin="${REGATTA_CHROMIUM:-}"
  if [ -n "$bin" ]; then
    [ -x "$bin" ] || die "REGATTA_CHROMIUM=$bin is not an executable"
    log "chromium found: $bin (REGATTA_CHROMIUM)"
    return
  fi
  if command -v chromium >/dev/null; then
    log "chromium found: $(command -v chromium) ($(chromium --version 2>/dev/null | head -n1))"
    return
  fi
  apt_install chromium
  command -v chromium >/dev/null || die "chromium was installed but no chromium is on PATH"
}

SOPS_VERSION="${SOPS_VERSION:-v3.13.3}"
build_sops() {
  local bin_dir out
  bin_dir="$(cd "$here/.." && pwd)/bin"
  out="$bin_dir/sops"
  if [ -x "$out" ] && "$out" --version --disable-version-check 2>/dev/null | grep -q "sops ${SOPS_VERSION#v}"; then
    log "sops found: $out (${SOPS_VERSION})"
    return
  fi
  log "building sops ${SOPS_VERSION} into $out"
  mkdir -p "$bin_dir"
  # `go install pkg@version` builds in the module's own context: sops'
  # go.mod, not regatta's.
  (cd / && GOBIN="$bin_dir" CGO_ENABLED=0 GOFLAGS=-mod=mod go install "github.com/getsops/sops/v3/cmd/sops@${SOPS_VERSION}")
  "$out" --version --disable-version-check | grep -q "sops ${SOPS_VERSION#v}" || die "bin/sops is not sops ${SOPS_VERSION}"
}

install_etcd
install_gpg
install_ssh_keygen
install_chromium
build_sops
"$here/build-kube.sh" "$@"
log "test environment ready"
