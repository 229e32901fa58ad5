#!/bin/sh
# The operators of Acto's bug corpus (fixtures/acto/): see setup-upstream.sh.
exec sh "$(dirname -- "$0")/setup-upstream.sh" acto "$@"
