#!/bin/sh
# Builds one Go main package with Go's own caches; shared by build-go-fixtures.sh and build-go-probe.sh.
#
#   sh scripts/go-build-cached.sh NAME SRC_DIR BINARY WHAT_SKIPS
#
# - A no-op (a few milliseconds, no `go` invocation) when BINARY is newer than every source file
#   (*.go, go.mod, go.sum) under SRC_DIR.
# - Modules come from the Go module proxy (GOPROXY) into the module cache; objects go to the build
#   cache (GOCACHE). Both survive between runs, so a rebuild after a source change only recompiles
#   this module.
# - Without a `go` command it prints why (NAME: ... WHAT_SKIPS) and exits 0, so `npm test` stays
#   runnable and the Go tests skip themselves.
# - Concurrent invocations (parallel test workers) wait for each other (flock) instead of racing.
# - The compiler runs at the lowest priority (nice 19): a build must not starve other work.
#
# Exit codes: 0 built or up to date (or go absent), 1 the build failed.
set -eu

name=$1
src=$2
bin=$3
skips=$4

if ! command -v go >/dev/null 2>&1; then
  echo "$name: no \`go\` command on PATH: $skips" >&2
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

mkdir -p "$(dirname "$bin")"
build() {
  # Someone else may have built it while we waited for the lock.
  if up_to_date; then
    return 0
  fi
  started=$(date +%s)
  echo "$name: building $bin (go $(go env GOVERSION), module cache $(go env GOMODCACHE), build cache $(go env GOCACHE))" >&2
  tmp="$bin.tmp.$$"
  # GOTOOLCHAIN=local: never download another toolchain; -trimpath: the same binary wherever the repo is.
  if ! (cd "$src" && GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly" nice -n 19 go build -trimpath -o "$tmp" .); then
    rm -f "$tmp"
    echo "$name: the build failed" >&2
    return 1
  fi
  mv -f "$tmp" "$bin"
  echo "$name: built in $(( $(date +%s) - started )) s" >&2
}

if command -v flock >/dev/null 2>&1; then
  exec 9>"$(dirname "$bin")/.build.lock"
  flock 9
fi
build
