#!/usr/bin/env bash
# Vendors the official Kubernetes protobuf schemas (generated.proto of k8s.io/api and
# k8s.io/apimachinery, Apache-2.0) into vendor/kubernetes-proto/proto/, fetched through the Go module
# proxy with `go mod download`. The layout keeps each file's import path, so the files' own
# `import "k8s.io/..."` lines resolve against that directory.
#
#   scripts/fetch-k8s-protos.sh [VERSION]      # default: the version in vendor/kubernetes-proto/proto/VERSION
#
# Afterwards run scripts/gen-k8s-protobuf-schema.sh to regenerate the decoder's schema module.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/vendor/kubernetes-proto/proto"
version="${1:-$(cat "$out/VERSION" 2>/dev/null || echo v0.31.14)}"

api_packages=(core/v1 apps/v1 batch/v1 coordination/v1 policy/v1 rbac/v1 events/v1 discovery/v1 networking/v1 autoscaling/v1 autoscaling/v2)
apimachinery_packages=(pkg/apis/meta/v1 pkg/runtime pkg/runtime/schema pkg/util/intstr pkg/api/resource)

module_dir() {
  # A throw-away module directory: `go mod download` of a fixed version needs no go.mod, but running
  # it outside any module keeps a surrounding go.work or go.mod from interfering.
  (cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$1@$version") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

api_dir="$(module_dir k8s.io/api)"
apimachinery_dir="$(module_dir k8s.io/apimachinery)"
[ -d "$api_dir" ] && [ -d "$apimachinery_dir" ] || { echo "go mod download failed for $version" >&2; exit 2; }

rm -rf "$out"
for p in "${api_packages[@]}"; do
  install -D -m 0644 "$api_dir/$p/generated.proto" "$out/k8s.io/api/$p/generated.proto"
done
for p in "${apimachinery_packages[@]}"; do
  install -D -m 0644 "$apimachinery_dir/$p/generated.proto" "$out/k8s.io/apimachinery/$p/generated.proto"
done
install -m 0644 "$api_dir/LICENSE" "$out/k8s.io/api/LICENSE"
install -m 0644 "$apimachinery_dir/LICENSE" "$out/k8s.io/apimachinery/LICENSE"
echo "$version" > "$out/VERSION"
echo "vendored $(find "$out" -name generated.proto | wc -l) generated.proto files of k8s.io/api and k8s.io/apimachinery $version into ${out#"$root"/}"
