#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/boundary.sh CORDON: the CLI built with -Dcli_shared=true is linked against
# libcordon.so, which exports only include/cordon.h's functions (a CLI that reached past
# the public header would not have linked), and it runs a command. TAP.
set -u
bin=$(readlink -f "$1")
echo "1..2"
if ldd "$bin" 2>/dev/null | grep -q 'libcordon\.so'; then
  echo "ok 1 - boundary: $bin is linked against libcordon.so"
else
  echo "not ok 1 - boundary: $bin is not linked against libcordon.so: $(ldd "$bin" 2>&1 | tr '\n' ' ')"
fi
if out=$(cd / && "$bin" run --no-workspace -- true 2>&1 </dev/null); then
  echo "ok 2 - boundary: $bin (on libcordon.so) runs a command"
else
  echo "not ok 2 - boundary: $bin run --no-workspace -- true failed: $(printf '%s' "$out" | tr '\n' ' ' | tr '#' '_')"
fi
