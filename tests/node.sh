#!/usr/bin/env bash
# tests/node.sh DIR: the Node package's tests (DIR/test/cordon.test.js, Node's own test
# runner, TAP) against $CORDON; a TAP skip where node is missing or too old (bootstrap.sh
# installs nodejs), never a quiet pass.
set -u
dir=$1
command -v node >/dev/null 2>&1 || { echo "1..0 # SKIP node not found (bootstrap.sh installs nodejs)"; exit 0; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "1..0 # SKIP node $major is older than 18, the package's minimum"; exit 0; }
[ -r "$dir/test/cordon.test.js" ] || { echo "1..0 # SKIP $dir cannot be read by uid $(id -u)"; exit 0; }
[ -n "${CORDON:-}" ] || { echo "1..0 # SKIP CORDON is not set (run through tests/harness.sh --cordon)"; exit 0; }
# node 18 prints TAP by default; from 19.9 the reporter is chosen (and defaults to `spec`
# on a terminal)
reporter=()
node --test-reporter=tap -e 0 >/dev/null 2>&1 && reporter=(--test-reporter=tap)
exec node --test "${reporter[@]}" "$dir/test/cordon.test.js"
