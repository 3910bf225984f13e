#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/python.sh TESTS LIBRARY: the Python binding's tests (TAP) against LIBRARY, or a
# TAP skip where python3 cannot load it (a sanitizer build's needs its runtime preloaded;
# the default build's run covers the binding).
set -u
tests=$1 lib=$2
[ -e "$lib" ] || { echo "1..0 # SKIP $lib not found (built by default: default_library=both)"; exit 0; }
[ -r "$tests" ] || { echo "1..0 # SKIP $tests cannot be read by uid $(id -u)"; exit 0; }
if ldd "$lib" 2>/dev/null | grep -q libasan; then
  echo "1..0 # SKIP $lib is a sanitizer build: python3 cannot load it without the ASan runtime preloaded (the default build's run covers the binding)"
  exit 0
fi
export CORDON_LIBRARY=$lib
exec /usr/bin/python3 "$tests" --tap
