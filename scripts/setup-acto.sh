#!/bin/sh
# Prepares the operators of Acto's bug corpus (../shared/acto/bugs.yaml) as a new user would: the
# operator's repository at the commit Acto tested, then `kperturb init` in it (which writes its
# kperturb.yaml and builds the manager with Go's caches). Nothing is configured by hand here.
#
# usage: scripts/setup-acto.sh [NAME ...]     prepare all (or the named) operators of fixtures/acto/
#
# Each operator is described by fixtures/acto/NAME/source.conf (shell assignments):
#   repo=<owner>/<name>   commit=<40 hex digits>   [init_args="..."]  (extra `kperturb init` options)
# The repository comes from a git directory holding that commit, looked up in this order:
#   $KPERTURB_ACTO_GIT/<owner>+<name>   (a bare repository or a clone's .git)
#   ${KPERTURB_MIRROR:-/work/.mirror}/<owner>+<name>/repo
# (for example `git clone --bare https://github.com/<owner>/<name> $KPERTURB_ACTO_GIT/<owner>+<name>`).
# The commit is unpacked into
#   ${KPERTURB_ACTO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/acto}/NAME/src
# once (a stamp of the commit makes a second run keep it), `kperturb init --force` runs there every
# time (kperturb's own code may have changed; Go's caches make the rebuild a relink), and
#   fixtures/acto/NAME/upstream -> that folder
# is linked in this clone (git-ignored), so `kperturb explore -c fixtures/acto/NAME/upstream/kperturb.yaml`
# runs the operator.
# Exit codes: 0 every requested operator prepared, 1 one failed (the others are still prepared),
# 2 bad usage, no `go`, or kperturb not built (`npm ci` first).
set -eu

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
confs="$root/fixtures/acto"
cache_root=${KPERTURB_ACTO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kperturb/acto}
mirror=${KPERTURB_MIRROR:-/work/.mirror}
log() { echo "setup:acto: $*" >&2; }

all_names() { for d in "$confs"/*/source.conf; do basename "$(dirname "$d")"; done; }
case "${1:-}" in -*) log "unknown option '$1' (usage: setup-acto.sh [NAME ...])"; exit 2 ;; esac
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
  for g in ${KPERTURB_ACTO_GIT:+"$KPERTURB_ACTO_GIT/$slug"} "$mirror/$slug/repo"; do
    if git --git-dir="$g" cat-file -e "$commit^{commit}" 2>/dev/null; then gitdir=$g; break; fi
  done
  if [ -z "$gitdir" ]; then
    log "$1: no git directory with $repo@$commit (looked in ${KPERTURB_ACTO_GIT:+$KPERTURB_ACTO_GIT/$slug and }$mirror/$slug/repo); clone it: git clone --bare https://github.com/$repo \"\$KPERTURB_ACTO_GIT/$slug\""
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
  # shellcheck disable=SC2086 # init_args is a list of options
  if ! node "$root/bin/kperturb.js" init "$dir/src" --force $init_args >"$dir/init.log" 2>&1; then
    log "$1: kperturb init failed after $(( $(date +%s) - started )) s; the last lines of $dir/init.log:"
    tail -n 15 "$dir/init.log" >&2
    return 1
  fi
  ln -sfn "$dir/src" "$confs/$1/upstream"
  log "$1: ready in $(( $(date +%s) - started )) s: $confs/$1/upstream/kperturb.yaml (init's output: $dir/init.log)"
}

mkdir -p "$cache_root"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/.lock"
  flock 9
fi
failed=
for n in "$@"; do
  rc=0
  prepare_one "$n" || rc=$?
  [ "$rc" -eq 2 ] && exit 2
  [ "$rc" -ne 0 ] && failed="$failed $n"
done
[ -z "$failed" ] || { log "failed:$failed"; exit 1; }
