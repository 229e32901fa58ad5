#!/bin/sh
# Prepares operators from their upstream repositories as a new user would: the operator's repository
# at a pinned commit, then `kperturb init` in it (which writes its kperturb.yaml and builds the
# manager with Go's caches). Nothing is configured by hand here. Two sets use it:
#   acto     the commits of Acto's bug corpus (../shared/acto/bugs.yaml)   `npm run setup:acto -- NAME`
#   current  the operators' latest releases                               `npm run setup:current -- NAME`
#
# usage: scripts/setup-upstream.sh SET [NAME ...]   prepare all (or the named) operators of fixtures/SET/
#
# Each operator is described by fixtures/SET/NAME/source.conf (shell assignments):
#   repo=<owner>/<name>   commit=<40 hex digits>   [init_args="..."]  (extra `kperturb init` options)
# The repository comes from a git directory holding that commit, looked up in this order:
#   $KPERTURB_UPSTREAM_GIT/<owner>+<name>   (a bare repository or a clone's .git; KPERTURB_ACTO_GIT too)
#   ${KPERTURB_MIRROR:-/work/.mirror}/<owner>+<name>/repo
# (for example `git clone --bare https://github.com/<owner>/<name> $KPERTURB_UPSTREAM_GIT/<owner>+<name>`).
# The commit is unpacked into
#   ${KPERTURB_UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/SET}/NAME/src
# (KPERTURB_ACTO_CACHE is still read for the acto set)
# once (a stamp of the commit makes a second run keep it), `kperturb init --force` runs there every
# time (kperturb's own code may have changed; Go's caches make the rebuild a relink), and
#   fixtures/SET/NAME/upstream -> that folder
# is linked in this clone (git-ignored), so `kperturb explore -c fixtures/SET/NAME/upstream/kperturb.yaml`
# runs the operator. init.log in the cache folder ends with the build's wall time (`build: N s`).
# Exit codes: 0 every requested operator prepared, 1 one failed (the others are still prepared),
# 2 bad usage, no `go`, or kperturb not built (`npm ci` first).
set -eu

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
usage="usage: setup-upstream.sh SET [NAME ...], SET one of: acto current"
set_name=${1:-}
case "$set_name" in
  acto) cache_default=${KPERTURB_ACTO_CACHE:-} git_default=${KPERTURB_ACTO_GIT:-} ;;
  current) cache_default= git_default= ;;
  *) echo "setup-upstream: unknown set '$set_name' ($usage)" >&2; exit 2 ;;
esac
shift
confs="$root/fixtures/$set_name"
cache_root=${KPERTURB_UPSTREAM_CACHE:-${cache_default:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/$set_name}}
git_root=${KPERTURB_UPSTREAM_GIT:-$git_default}
mirror=${KPERTURB_MIRROR:-/work/.mirror}
log() { echo "setup:$set_name: $*" >&2; }

all_names() { for d in "$confs"/*/source.conf; do basename "$(dirname "$d")"; done; }
case "${1:-}" in -*) log "unknown option '$1' ($usage)"; exit 2 ;; esac
[ $# -eq 0 ] && set -- $(all_names)
command -v go >/dev/null 2>&1 || { log "no \`go\` command on PATH: install Go >= 1.22 to build the operators"; exit 2; }
[ -f "$root/dist/src/cli/main.js" ] || { log "kperturb is not built in $root: run \`npm ci\` first"; exit 2; }

load_conf() { # load_conf NAME: sets repo, commit, init_args, gitdir
  if [ ! -f "$confs/$1/source.conf" ]; then
    log "$confs/$1/source.conf: no such operator (known: $(all_names | tr '\n' ' '))"
    return 2
  fi
  repo= commit= init_args=
  . "$confs/$1/source.conf"
  case "$repo" in */*) ;; *) log "$confs/$1/source.conf: expected repo=<owner>/<name>, got '$repo'"; return 2 ;; esac
  case "$commit" in
    [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) ;;
    *) log "$confs/$1/source.conf: expected commit=<hex digits>, got '$commit'"; return 2 ;;
  esac
  slug=$(echo "$repo" | tr / +)
  gitdir=
  for g in ${git_root:+"$git_root/$slug"} "$mirror/$slug/repo"; do
    if git --git-dir="$g" cat-file -e "$commit^{commit}" 2>/dev/null; then gitdir=$g; break; fi
  done
  if [ -z "$gitdir" ]; then
    log "$1: no git directory with $repo@$commit (looked in ${git_root:+$git_root/$slug and }$mirror/$slug/repo); clone it: git clone --bare https://github.com/$repo \"\$KPERTURB_UPSTREAM_GIT/$slug\""
    return 2
  fi
}

prepare_one() { # prepare_one NAME
  load_conf "$1" || return $?
  dir="$cache_root/$1"
  started=$(date +%s)
  if [ ! -f "$dir/.stamp" ] || [ "$(cat "$dir/.stamp")" != "$repo@$commit" ]; then
    log "$1: unpacking $repo@$commit from $gitdir"
    rm -rf "$dir/src" "$dir/.stamp"
    mkdir -p "$dir/src"
    git --git-dir="$gitdir" archive --format=tar "$commit" | tar xf - -C "$dir/src" || { log "$1: git archive failed"; return 1; }
    echo "$repo@$commit" > "$dir/.stamp"
  fi
  init_started=$(date +%s)
  # shellcheck disable=SC2086 # init_args is a list of options
  if ! node "$root/bin/kperturb.js" init "$dir/src" --force $init_args >"$dir/init.log" 2>&1; then
    log "$1: kperturb init failed after $(( $(date +%s) - started )) s; the last lines of $dir/init.log:"
    tail -n 15 "$dir/init.log" >&2
    return 1
  fi
  echo "build: $(( $(date +%s) - init_started )) s (kperturb init, GOCACHE $(go env GOCACHE))" >>"$dir/init.log"
  ln -sfn "$dir/src" "$confs/$1/upstream"
  log "$1: ready in $(( $(date +%s) - started )) s, init and build $(( $(date +%s) - init_started )) s: $confs/$1/upstream/kperturb.yaml (init's output: $dir/init.log)"
}

mkdir -p "$cache_root"
if command -v flock >/dev/null 2>&1; then
  exec 9>>"$cache_root/.lock"
  if ! flock -n 9; then
    # Another setup builds into the same cache: say so, and who, rather than wait in silence.
    log "waiting for $cache_root/.lock: another setup holds it (pid $(cat "$cache_root/.lock.pid" 2>/dev/null || echo unknown))"
    flock 9
  fi
  echo $$ >"$cache_root/.lock.pid"
fi
failed=
for n in "$@"; do
  rc=0
  prepare_one "$n" || rc=$?
  [ "$rc" -eq 2 ] && exit 2
  [ "$rc" -ne 0 ] && failed="$failed $n"
done
[ -z "$failed" ] || { log "failed:$failed"; exit 1; }
