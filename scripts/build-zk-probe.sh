#!/bin/sh
# Builds the ZooKeeper client probe (fixtures/clients/zk-probe: github.com/samuel/go-zookeeper at the
# version pravega zookeeper-operator pins) into fixtures/clients/zk-probe/bin/zk-probe, with Go's
# caches (a no-op when up to date; exits 0 without `go`): see scripts/go-build-cached.sh.
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
exec sh "$root/scripts/go-build-cached.sh" build-zk-probe "$root/fixtures/clients/zk-probe" "$root/fixtures/clients/zk-probe/bin/zk-probe" \
  "the ZooKeeper stub's real-client test is skipped"
