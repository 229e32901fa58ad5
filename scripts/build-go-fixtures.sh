#!/bin/sh
# Builds the Go example operators (fixtures/controllers/go) into fixtures/controllers/go/bin/kperturb-fixtures.
#
# - A no-op (a few milliseconds, no `go` invocation) when the binary is newer than every source file.
# - Modules come from the Go module proxy (GOPROXY) into the module cache; objects go to the build
#   cache (GOCACHE). Both are Go's own caches and survive between runs, so a rebuild after a source
#   change only recompiles this module.
# - Without a `go` command it prints why and exits 0: `npm test` stays runnable, and the Go e2e
#   tests skip themselves with the same message.
# - Concurrent invocations (parallel test workers) wait for each other instead of racing.
#
# Exit codes: 0 built or up to date (or go absent), 1 the build failed.
set -eu

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
src="$root/fixtures/controllers/go"
bin="$src/bin/kperturb-fixtures"

if ! command -v go >/dev/null 2>&1; then
  echo "build-go-fixtures: no \`go\` command on PATH: the Go example operators are not built and their tests are skipped" >&2
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
  # Someone else may have built it while we waited for the lock.
  if up_to_date; then
    return 0
  fi
  started=$(date +%s)
  echo "build-go-fixtures: building $bin (go $(go env GOVERSION), module cache $(go env GOMODCACHE), build cache $(go env GOCACHE))" >&2
  tmp="$bin.tmp.$$"
  # GOTOOLCHAIN=local: never download another toolchain; -trimpath: the same binary wherever the repo is.
  if ! (cd "$src" && GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly" go build -trimpath -o "$tmp" .); then
    rm -f "$tmp"
    echo "build-go-fixtures: the build failed" >&2
    return 1
  fi
  mv -f "$tmp" "$bin"
  echo "build-go-fixtures: built in $(( $(date +%s) - started )) s" >&2
}

if command -v flock >/dev/null 2>&1; then
  exec 9>"$src/bin/.build.lock"
  flock 9
fi
build
