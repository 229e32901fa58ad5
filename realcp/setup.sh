#!/bin/sh
# Builds the real control plane kperturb's real-cluster tier runs on: kube-apiserver and
# kube-controller-manager from the k8s.io/kubernetes module (realcp/kube) and etcd 3.5 from
# go.etcd.io/etcd/server/v3 (realcp/etcd), with the Go toolchain and the Go module proxy only.
#
# usage: realcp/setup.sh                  build if needed, then print the bin directory on stdout
#        realcp/setup.sh --print-bin-dir  print the bin directory if it is up to date; exit 3 if not
#        realcp/setup.sh --force          rebuild even if up to date
#
# The binaries are cached once per machine, by version, outside the repository:
#   ${KPERTURB_REAL_CP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/real-control-plane}/
#       kubernetes-<version>_etcd-<version>/bin/{kube-apiserver,kube-controller-manager,etcd}
# The directory holds a stamp (hash of the go.mod/go.sum/main files and the build flags); a cache
# whose stamp differs is rebuilt. Modules come through GOPROXY into Go's module cache and
# objects go to Go's build cache, so a rebuild after a version bump only compiles what changed.
# Concurrent invocations wait for each other (flock) instead of racing.
#
# Exit codes: 0 built or up to date, 1 the build failed, 2 no usable `go`, 3 (--print-bin-dir) not built.
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
mode=build
case "${1:-}" in
  "") ;;
  --print-bin-dir) mode=print ;;
  --force) mode=force ;;
  *) echo "realcp/setup.sh: unknown argument '$1' (expected --print-bin-dir or --force)" >&2; exit 2 ;;
esac

log() { echo "realcp/setup: $*" >&2; }

module_version() { # module_version <go.mod> <module path>
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"
}

k8s_version=$(module_version "$here/kube/go.mod" k8s.io/kubernetes)
etcd_version=$(module_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3)
if [ -z "$k8s_version" ] || [ -z "$etcd_version" ]; then
  log "cannot read the k8s.io/kubernetes version from $here/kube/go.mod or the etcd version from $here/etcd/go.mod"
  exit 2
fi

cache_root=${KPERTURB_REAL_CP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/real-control-plane}
bin="$cache_root/kubernetes-${k8s_version}_etcd-${etcd_version}/bin"
binaries="kube-apiserver kube-controller-manager etcd"

# What the binaries are built with, in the order the builds use it. Change anything here and the
# stamp changes, so the cache is rebuilt.
k8s_minor=$(echo "$k8s_version" | cut -d. -f2)
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags="$kube_ldflags -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor -X $pkg.gitTreeState=clean"
done
etcd_ldflags="-s -w"

have_go() { command -v go >/dev/null 2>&1; }

# The sources and flags the binaries are built from. Not the Go version: a Go upgrade would otherwise
# force a full rebuild (the build cache is per toolchain) of binaries that are still correct.
stamp() {
  {
    cat "$here/kube/go.mod" "$here/kube/go.sum" "$here/etcd/go.mod" "$here/etcd/go.sum" "$here/etcd/main.go"
    echo "$kube_ldflags|$etcd_ldflags|CGO_ENABLED=0|-trimpath"
  } | sha256sum | cut -d' ' -f1
}

up_to_date() {
  [ -f "$bin/.stamp" ] || return 1
  for b in $binaries; do [ -x "$bin/$b" ] || return 1; done
  [ "$(cat "$bin/.stamp")" = "$(stamp)" ]
}

if [ "$mode" = print ]; then
  if up_to_date; then
    echo "$bin"
    exit 0
  fi
  log "the real control plane (kubernetes $k8s_version, etcd $etcd_version) is not built in $bin, or not from the current realcp/ sources; run: npm run setup:real"
  exit 3
fi

if ! have_go; then
  log "no \`go\` command on PATH: install Go >= 1.24 to build the real control plane (kubernetes $k8s_version, etcd $etcd_version)"
  exit 2
fi

elapsed() { echo "$(( $(date +%s) - $1 )) s"; }

build() {
  if [ "$mode" != force ] && up_to_date; then
    log "up to date: $bin (kubernetes $k8s_version, etcd $etcd_version)"
    return 0
  fi
  started=$(date +%s)
  log "building kubernetes $k8s_version (kube-apiserver, kube-controller-manager) and etcd $etcd_version into $bin"
  log "go $(go env GOVERSION), GOPROXY=$(go env GOPROXY), module cache $(go env GOMODCACHE), build cache $(go env GOCACHE)"
  tmp="$bin.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # GOTOOLCHAIN=local: never download another toolchain; -mod=readonly: the committed go.sum is the
  # whole truth; -buildvcs=false: kperturb's git state is not the binaries' version; CGO_ENABLED=0
  # as upstream builds its control plane; -trimpath (below): no local paths in the binaries.
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"

  step=$(date +%s)
  log "downloading modules (skipped when Go's module cache already has them)"
  if ! (cd "$here/kube" && go mod download) || ! (cd "$here/etcd" && go mod download); then
    rm -rf "$tmp"; log "module download failed"; return 1
  fi
  log "modules ready in $(elapsed "$step")"

  step=$(date +%s)
  log "compiling kube-apiserver and kube-controller-manager (one go build: they share most packages)"
  if ! (cd "$here/kube" && go build -trimpath -ldflags "$kube_ldflags" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager); then
    rm -rf "$tmp"; log "the kubernetes build failed"; return 1
  fi
  log "kubernetes built in $(elapsed "$step")"

  step=$(date +%s)
  log "compiling etcd"
  if ! (cd "$here/etcd" && go build -trimpath -ldflags "$etcd_ldflags" -o "$tmp/etcd" .); then
    rm -rf "$tmp"; log "the etcd build failed"; return 1
  fi
  log "etcd built in $(elapsed "$step")"

  stamp > "$tmp/.stamp"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH) in $(elapsed "$started")" > "$tmp/.build-info"
  rm -rf "$bin"
  mv "$tmp" "$bin"
  log "done in $(elapsed "$started"): $(cd "$bin" && ls | tr '\n' ' ')"
}

mkdir -p "$cache_root"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/.build.lock"
  flock 9
fi
build
echo "$bin"
