#!/bin/sh
# Builds the Go example operators (fixtures/controllers/go) into fixtures/controllers/go/bin/kperturb-fixtures,
# with Go's caches (a no-op when up to date; exits 0 without `go`): see scripts/go-build-cached.sh.
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
exec sh "$root/scripts/go-build-cached.sh" build-go-fixtures "$root/fixtures/controllers/go" "$root/fixtures/controllers/go/bin/kperturb-fixtures" \
  "the Go example operators are not built and their tests are skipped"
