#!/usr/bin/env bash
# Regenerates test/cluster/protobuf/vectors/ (NAME.pb: an object as client-go sends it in protobuf;
# NAME.json: the JSON the API server stores for it) with apimachinery's own serializers. Needs Go;
# npm test only reads the committed files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(cat "$root/vendor/kubernetes-proto/proto/VERSION")"
for mod in k8s.io/api k8s.io/apimachinery; do
  grep -q "$mod $version" "$root/scripts/protobuf-vectors/go.mod" ||
    { echo "scripts/protobuf-vectors/go.mod does not require $mod $version (go get $mod@$version)" >&2; exit 2; }
done
out="$root/test/cluster/protobuf/vectors"
rm -rf "$out"
(cd "$root/scripts/protobuf-vectors" && go run . "$out")
