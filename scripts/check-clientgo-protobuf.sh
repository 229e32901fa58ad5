#!/usr/bin/env bash
# End-to-end check with real Go clients: starts the embedded cluster (`kperturb cluster`), then runs
# scripts/clientgo-protobuf-check (client-go and controller-runtime sending protobuf bodies: create,
# update, delete of ConfigMaps, Secrets and StatefulSets, and an informer) against it. Needs Go and a
# build (`npm run build`). Exit code: the check's (0 all steps passed, 1 a step failed, 2 setup).
#
#   scripts/check-clientgo-protobuf.sh [PORT]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
port="${1:-18731}"
tmp="$(mktemp -d)"
kubeconfig="$tmp/kubeconfig.yaml"

node "$root/bin/kperturb.js" cluster --port "$port" --kubeconfig-out "$kubeconfig" > "$tmp/cluster.log" 2>&1 &
cluster_pid=$!
cleanup() {
  kill "$cluster_pid" 2>/dev/null || true
  wait "$cluster_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
  [ -s "$kubeconfig" ] && break
  kill -0 "$cluster_pid" 2>/dev/null || { echo "the embedded cluster exited:" >&2; cat "$tmp/cluster.log" >&2; exit 2; }
  sleep 0.1
done
[ -s "$kubeconfig" ] || { echo "no kubeconfig from the embedded cluster after 10 s" >&2; exit 2; }

cd "$root/scripts/clientgo-protobuf-check"
go run . -kubeconfig "$kubeconfig"
