#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/node.sh library|cli PACKAGE LIBDIR: the Node package's tests
# (PACKAGE/test/cordon.test.js, Node's own test runner, TAP) against $CORDON, with its
# fast path (PACKAGE/src/cordon_node.c) built against LIBDIR's libcordon.so in a copy of
# the package (`library`), or without it (`cli`: the command line only). A TAP skip where
# node is missing or too old, or the fast path cannot be built here (no compiler or Node
# headers: bootstrap.sh installs them; a sanitizer build of the library), never a quiet
# pass.
set -u
mode=$1 pkg=$2 lib=$3
skip() {
  echo "1..0 # SKIP $*"
  exit 0
}
command -v node >/dev/null 2>&1 || skip "node not found (bootstrap.sh installs nodejs)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || skip "node $major is older than 18, the package's minimum"
[ -r "$pkg/test/cordon.test.js" ] || skip "$pkg cannot be read by uid $(id -u)"
[ -n "${CORDON:-}" ] || skip "CORDON is not set (run through tests/harness.sh --cordon)"
work=$PWD/node-test
mkdir -p "$work" && cp -R "$pkg" "$work/pkg" || skip "cannot copy $pkg into $work"
rm -rf "$work/pkg/build"
case $mode in
  library)
    [ -e "$lib/libcordon.so" ] || skip "$lib/libcordon.so not found (built by default: default_library=both)"
    if ldd "$lib/libcordon.so" 2>/dev/null | grep -q libasan; then
      skip "$lib/libcordon.so is a sanitizer build: node cannot load it without the ASan runtime preloaded (the default build's run covers the fast path)"
    fi
    command -v "${CC:-cc}" >/dev/null 2>&1 || skip "no C compiler for the fast path"
    out=$(CORDON_LIB_DIR=$lib CORDON_INCLUDE_DIR=$pkg/../include node "$work/pkg/build.js" 2>&1)
    [ -e "$work/pkg/build/cordon.node" ] || skip "the fast path did not build here: $out"
    export CORDON_NODE_EXPECT=library
    ;;
  cli)
    export CORDON_NODE_ADDON=0 CORDON_NODE_EXPECT=cli
    ;;
  *) echo "usage: node.sh library|cli PACKAGE LIBDIR" >&2; exit 2 ;;
esac
# node 18 prints TAP by default; from 19.9 the reporter is chosen (and defaults to `spec`
# on a terminal)
reporter=()
node --test-reporter=tap -e 0 >/dev/null 2>&1 && reporter=(--test-reporter=tap)
exec node --test "${reporter[@]}" "$work/pkg/test/cordon.test.js"
