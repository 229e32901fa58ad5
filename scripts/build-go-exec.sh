#!/bin/sh
# Builds the exec protocol client (fixtures/clients/go-exec: client-go v0.20's remotecommand SPDY
# executor, as Sieve-era operators call pods/exec) into fixtures/clients/go-exec/bin/go-exec, with
# Go's caches (a no-op when up to date; exits 0 without `go`): see scripts/go-build-cached.sh.
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
exec sh "$root/scripts/go-build-cached.sh" build-go-exec "$root/fixtures/clients/go-exec" "$root/fixtures/clients/go-exec/bin/go-exec" \
  "the go-exec client is not built and the SPDY exec tests with it are skipped"
