#!/usr/bin/env bash
# Regenerates vendor/kubernetes-proto/schema.generated.ts (the protobuf decoder's schema) from the vendored
# .proto files and the Go types of the same k8s.io/api version. Needs Go and `npm ci`; run it after
# scripts/fetch-k8s-protos.sh. The Go module in scripts/protobuf-json-fields must require the version in
# vendor/kubernetes-proto/proto/VERSION.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(cat "$root/vendor/kubernetes-proto/proto/VERSION")"
for mod in k8s.io/api k8s.io/apimachinery; do
  grep -q "$mod $version" "$root/scripts/protobuf-json-fields/go.mod" ||
    { echo "scripts/protobuf-json-fields/go.mod does not require $mod $version (go get $mod@$version)" >&2; exit 2; }
done
facts="$(mktemp)"
trap 'rm -f "$facts"' EXIT
(cd "$root/scripts/protobuf-json-fields" && go run .) > "$facts"
node "$root/scripts/gen-k8s-protobuf-schema.mjs" "$facts"
