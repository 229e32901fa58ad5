#!/bin/sh
# Builds the Go client of the client fidelity matrix (fixtures/clients/go-probe, a controller-runtime
# manager at its defaults) into fixtures/clients/go-probe/bin/go-probe. The same caching as
# scripts/build-go-fixtures.sh:
#
# - A no-op (no `go` invocation) when the binary is newer than every source file.
# - Modules from the Go module proxy into Go's module cache, objects into Go's build cache; the probe
#   pins the same client-go/controller-runtime versions as fixtures/controllers/go, so on a machine
#   that built those nothing is downloaded.
# - Without a `go` command it prints why and exits 0; the matrix's Go cells then skip with that reason.
# - Concurrent invocations wait for each other (flock).
# - Runs the compiler at the lowest priority (nice 19): the build must not starve other work.
#
# Exit codes: 0 built or up to date (or go absent), 1 the build failed.
set -eu

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
src="$root/fixtures/clients/go-probe"
bin="$src/bin/go-probe"

if ! command -v go >/dev/null 2>&1; then
  echo "build-go-probe: no \`go\` command on PATH: the Go probe is not built and the matrix's Go cells are skipped" >&2
  exit 0
fi

up_to_date() {
  [ -x "$bin" ] || return 1
  newer=$(find "$src" -path "$src/bin" -prune -o \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$bin" -print | head -n 1)
  [ -z "$newer" ]
}

if up_to_date; then
  exit 0
fi

mkdir -p "$src/bin"
build() {
  if up_to_date; then
    return 0
  fi
  started=$(date +%s)
  echo "build-go-probe: building $bin (go $(go env GOVERSION), module cache $(go env GOMODCACHE), build cache $(go env GOCACHE))" >&2
  tmp="$bin.tmp.$$"
  if ! (cd "$src" && GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly" nice -n 19 go build -trimpath -o "$tmp" .); then
    rm -f "$tmp"
    echo "build-go-probe: the build failed" >&2
    return 1
  fi
  mv -f "$tmp" "$bin"
  echo "build-go-probe: built in $(( $(date +%s) - started )) s" >&2
}

if command -v flock >/dev/null 2>&1; then
  exec 9>"$src/bin/.build.lock"
  flock 9
fi
build
