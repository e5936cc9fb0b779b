#!/usr/bin/env bash
# Builds the binaries of regatta's test environment into bin/ (git-ignored):
#
#   bin/kube-apiserver-vX.Y.Z   one per version, all compiled from the single
#                               Kubernetes source pinned in hack/kube/go.mod and
#                               only stamped with a different version at link time
#   bin/kubectl                 stamped with the source version
#   bin/kube-controller-manager-vX.Y.Z
#   bin/kube-scheduler-vX.Y.Z   the controllers and scheduler of controller-backed
#                               test clusters (internal/testenv Controllers), one
#                               pair per version in $CONTROL_PLANE_VERSIONS
#                               (default: the source version). A cluster runs the
#                               pair stamped with its API server's version: the
#                               stamp sets the feature gates, and so the APIs they
#                               wait for (a v1.37 kube-scheduler waits forever for
#                               resource.k8s.io/v1 DeviceTaintRules, which a v1.36
#                               API server does not serve). `make demo` builds them
#                               for the demo's three versions.
#   bin/kwok                    sigs.k8s.io/kwok, pinned in hack/kwok/go.mod (its
#                               own module: its k8s.io versions differ), which
#                               simulates the nodes of those clusters
#
# Usage: hack/build-kube.sh [vX.Y.Z ...]
#   Versions default to $KUBE_VERSIONS or "v1.35.4 v1.36.3 v1.37.2".
#   REGATTA_BIN_DIR overrides the output folder.
#
# Binaries that already exist are skipped, so the script is cheap to re-run.
# The first build compiles k8s.io/kubernetes (3-6 minutes on 2 cores); every
# further version only relinks (seconds), because -X flags affect the link step
# and nothing else.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kube_mod="$root/hack/kube"
kwok_mod="$root/hack/kwok"
bin_dir="${REGATTA_BIN_DIR:-$root/bin}"
default_versions="${KUBE_VERSIONS:-v1.35.4 v1.36.3 v1.37.2}"

log() { printf 'build-kube: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "go is not on PATH"
command -v flock >/dev/null || die "flock (util-linux) is not on PATH"

# source_version prints the k8s.io/kubernetes version that hack/kube pins.
source_version() {
  (cd "$kube_mod" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
}

# build builds package $1 of hack/kube into $2, stamped as version $3.
build() {
  local pkg="$1" out="$2" version="$3"
  if [ -x "$out" ]; then
    log "$(basename "$out") exists, skipping"
    return
  fi
  local minor="${version#v1.}"
  minor="${minor%%.*}"
  # -s -w: no symbol table or DWARF; links ~30% faster, binary 170 -> 120 MB.
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${version}"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
  ldflags+=" -X k8s.io/component-base/version.gitMinor=${minor}"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  local tmp="${out}.tmp.$$"
  log "building $(basename "$out") (${pkg}, stamped ${version})"
  local start=$SECONDS
  if ! (cd "$kube_mod" && go build -o "$tmp" -ldflags "$ldflags" "$pkg"); then
    rm -f "$tmp"
    die "go build of ${pkg} for ${version} failed"
  fi
  mv -f "$tmp" "$out"
  log "built $(basename "$out") in $((SECONDS - start))s"
}

# build_kwok builds the kwok command of the version hack/kwok pins into $1.
build_kwok() {
  local out="$1"
  if [ -x "$out" ]; then
    log "kwok exists, skipping"
    return
  fi
  local tmp="${out}.tmp.$$" start=$SECONDS
  log "building kwok (sigs.k8s.io/kwok $(cd "$kwok_mod" && go list -m -f '{{.Version}}' sigs.k8s.io/kwok))"
  if ! (cd "$kwok_mod" && go build -o "$tmp" -ldflags "-s -w" sigs.k8s.io/kwok/cmd/kwok); then
    rm -f "$tmp"
    die "go build of kwok failed"
  fi
  mv -f "$tmp" "$out"
  log "built kwok in $((SECONDS - start))s"
}

main() {
  local versions=("$@")
  if [ ${#versions[@]} -eq 0 ]; then
    read -r -a versions <<<"$default_versions"
  fi
  local v
  for v in "${versions[@]}"; do
    [[ "$v" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "version ${v} is not of the form v1.Y.Z"
  done

  mkdir -p "$bin_dir"
  # Serialise concurrent runs (two `make test` at once) on one lock file.
  exec 9>"$bin_dir/.build-kube.lock"
  flock 9

  local src
  src="$(source_version)" || die "cannot read the k8s.io/kubernetes version from ${kube_mod}/go.mod"
  log "Kubernetes source ${src}; output folder ${bin_dir}"

  for v in "${versions[@]}"; do
    local out="$bin_dir/kube-apiserver-$v"
    build ./kube-apiserver "$out" "$v"
  done

  build ./kubectl "$bin_dir/kubectl" "$src"
  local cp_versions=()
  read -r -a cp_versions <<<"${CONTROL_PLANE_VERSIONS:-$src}"
  for v in "${cp_versions[@]}"; do
    [[ "$v" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "CONTROL_PLANE_VERSIONS: ${v} is not of the form v1.Y.Z"
    build ./kube-controller-manager "$bin_dir/kube-controller-manager-$v" "$v"
    build ./kube-scheduler "$bin_dir/kube-scheduler-$v" "$v"
  done
  build_kwok "$bin_dir/kwok"
  log "done"
}

main "$@"
