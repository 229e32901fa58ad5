#!/bin/sh
# Builds the real operators Sieve tested (../shared/operators/src/*.tar.gz) into a per-machine cache,
# one manager binary each, with the Go toolchain and the Go module proxy only.
#
# usage: scripts/setup-operators.sh [--force] [NAME ...]   build (all, or the named ones) if needed
#        scripts/setup-operators.sh --print-bin NAME       print NAME's binary if up to date; exit 3 if not
#
# Each operator is described by fixtures/operators/NAME/build.conf (shell assignments):
#   archive=<file in ../shared/operators/src>  main=<main package>  [mod=mod|vendor]
#   [replace="<old>=<new>@<version> ..."]  (go mod edit -replace, for modules the proxy refuses)
# Every operator also gets the replace lines of $vanity_replace below: two vanity module paths that
# 2019-20 Kubernetes libraries require and the Go module proxy refuses (403), whose GitHub twins at
# the same commits it serves. A replace of a module the build does not need is harmless.
# The archive is unpacked into
#   ${KPERTURB_OPERATORS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/operators}/NAME/src
# and built to .../NAME/bin/manager. Build fixes (the replace lines) go into that unpacked copy
# only; the archives and this repository's sources are never changed. A stamp (hash of the archive,
# build.conf, the common replace lines and the build flags) makes a second run a no-op. Each run (re)links, in this clone,
#   fixtures/operators/NAME/manager  -> the binary
#   fixtures/operators/NAME/upstream -> the unpacked source (the CRDs and manifests the operator ships)
# so that fixtures/operators/NAME/kperturb.yaml refers to them by relative paths (both links are
# git-ignored). Modules come through GOPROXY into Go's
# module cache and objects go to Go's build cache, both outside the clone.
#
# Environment: KPERTURB_OPERATORS_SRC (default ../shared/operators/src beside the repository).
# Exit codes: 0 every requested operator built or up to date, 1 a build failed (the others are still
# built), 2 bad usage or no `go`, 3 (--print-bin) not built.
set -eu

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
confs="$root/fixtures/operators"
src_dir=${KPERTURB_OPERATORS_SRC:-$root/../shared/operators/src}
cache_root=${KPERTURB_OPERATORS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/operators}
log() { echo "setup:operators: $*" >&2; }
vanity_replace="vbom.ml/util=github.com/fvbommel/util@v0.0.0-20160121211510-db5cfe13f5cc bou.ke/monkey=github.com/bouk/monkey@v1.0.1"

mode=build
case "${1:-}" in
  --force) mode=force; shift ;;
  --print-bin) mode=print; shift ;;
  -*) log "unknown option '$1' (expected --force or --print-bin NAME)"; exit 2 ;;
esac

all_names() { for d in "$confs"/*/build.conf; do basename "$(dirname "$d")"; done; }
if [ $# -eq 0 ]; then
  [ "$mode" = print ] && { log "--print-bin needs an operator name: $(all_names | tr '\n' ' ')"; exit 2; }
  set -- $(all_names)
fi

build_flags="GOTOOLCHAIN=local CGO_ENABLED=0 -buildvcs=false -trimpath"
stamp() { # stamp NAME: what the binary is built from (not the Go version: the build cache handles that)
  { sha256sum "$src_dir/$archive" | cut -d' ' -f1; cat "$confs/$1/build.conf"; echo "$vanity_replace|$build_flags"; } | sha256sum | cut -d' ' -f1
}

load_conf() { # load_conf NAME: sets archive, main, mod, replace
  if [ ! -f "$confs/$1/build.conf" ]; then
    log "$confs/$1/build.conf: no such operator (known: $(all_names | tr '\n' ' '))"
    return 2
  fi
  archive= main= mod=mod replace=
  . "$confs/$1/build.conf"
  if [ -z "$archive" ] || [ -z "$main" ]; then
    log "$confs/$1/build.conf: expected archive=... and main=..."
    return 2
  fi
  if [ ! -f "$src_dir/$archive" ]; then
    log "$src_dir/$archive: archive not found (set KPERTURB_OPERATORS_SRC to the folder that holds it)"
    return 2
  fi
}

up_to_date() { # up_to_date NAME
  [ -x "$cache_root/$1/bin/manager" ] && [ -f "$cache_root/$1/.stamp" ] && [ "$(cat "$cache_root/$1/.stamp")" = "$(stamp "$1")" ]
}

if [ "$mode" = print ]; then
  load_conf "$1" || exit $?
  if up_to_date "$1"; then echo "$cache_root/$1/bin/manager"; exit 0; fi
  log "$1 is not built (or not from the current sources) in $cache_root/$1; run: npm run setup:operators -- $1"
  exit 3
fi

if ! command -v go >/dev/null 2>&1; then
  log "no \`go\` command on PATH: install Go >= 1.22 to build the real operators"
  exit 2
fi

link() { # link NAME: the clone's links to the cached binary and source
  ln -sfn "$cache_root/$1/bin/manager" "$confs/$1/manager"
  ln -sfn "$cache_root/$1/src" "$confs/$1/upstream"
}

build_one() { # build_one NAME
  name=$1
  load_conf "$name" || return $?
  dir="$cache_root/$name"
  if [ "$mode" != force ] && up_to_date "$name"; then
    link "$name"
    log "$name: up to date ($dir/bin/manager)"
    return 0
  fi
  started=$(date +%s)
  log "$name: unpacking $archive and building $main (go $(go env GOVERSION), module cache $(go env GOMODCACHE))"
  rm -rf "$dir/src" "$dir/.stamp"
  mkdir -p "$dir/src" "$dir/bin"
  tar xzf "$src_dir/$archive" -C "$dir/src" --strip-components=1
  for r in $vanity_replace $replace; do
    (cd "$dir/src" && go mod edit -replace "$r") || { log "$name: go mod edit -replace $r failed"; return 1; }
  done
  # GOTOOLCHAIN=local: never download a toolchain; -mod=mod: the 2020-21 go.sum files are
  # incomplete for today's go; vendor: the archive carries its dependencies. nice: a build must
  # not starve a test run beside it.
  if ! (cd "$dir/src" && GOTOOLCHAIN=local GOFLAGS="-mod=$mod -buildvcs=false" CGO_ENABLED=0 \
        nice -n 10 go build -trimpath -o "$dir/bin/manager.tmp" "$main") >"$dir/build.log" 2>&1; then
    log "$name: the build failed after $(( $(date +%s) - started )) s; the last lines of $dir/build.log:"
    tail -n 15 "$dir/build.log" >&2
    return 1
  fi
  mv -f "$dir/bin/manager.tmp" "$dir/bin/manager"
  stamp "$name" > "$dir/.stamp"
  link "$name"
  log "$name: built in $(( $(date +%s) - started )) s: $dir/bin/manager"
}

mkdir -p "$cache_root"
if command -v flock >/dev/null 2>&1; then
  exec 9>>"$cache_root/.build.lock"
  if ! flock -n 9; then
    # Another setup builds into the same cache: say so, and who, rather than wait in silence.
    log "waiting for $cache_root/.build.lock: another setup holds it (pid $(cat "$cache_root/.build.lock.pid" 2>/dev/null || echo unknown))"
    flock 9
  fi
  echo $$ >"$cache_root/.build.lock.pid"
fi
all_started=$(date +%s)
failed=
for n in "$@"; do
  rc=0
  build_one "$n" || rc=$?
  [ "$rc" -eq 2 ] && exit 2
  [ "$rc" -ne 0 ] && failed="$failed $n"
done
log "done in $(( $(date +%s) - all_started )) s${failed:+; failed:$failed}"
[ -z "$failed" ]
