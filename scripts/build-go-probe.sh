#!/bin/sh
# Builds the Go client of the client fidelity matrix (fixtures/clients/go-probe, a controller-runtime
# manager at its defaults) into fixtures/clients/go-probe/bin/go-probe, with Go's caches (a no-op when
# up to date; exits 0 without `go`): see scripts/go-build-cached.sh. The probe pins the same
# client-go/controller-runtime versions as fixtures/controllers/go, so nothing new is downloaded.
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
exec sh "$root/scripts/go-build-cached.sh" build-go-probe "$root/fixtures/clients/go-probe" "$root/fixtures/clients/go-probe/bin/go-probe" \
  "the Go probe is not built and the matrix's Go cells are skipped"
