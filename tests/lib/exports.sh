#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The boundary: libcordon.so exports exactly the functions include/cordon.h declares with
# CORDON_API, and nothing else (the export map, src/lib/libcordon.map, and
# -fvisibility=hidden together). TAP output, for meson's unit suite.
#   usage: exports.sh LIBCORDON_SO CORDON_H
set -uo pipefail
so=$1 header=$2
echo "1..5"
declared=$(grep -v '^#' "$header" | tr '\n' ' ' | grep -o 'CORDON_API [^(;]*(' | sed 's/($//; s/.*[ *]//' | sort -u)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWiDdBbRr]$/ {print $3}' | sed 's/@.*//' | sort -u)
if [ -n "$declared" ] && [ "$(printf '%s\n' "$declared" | wc -l)" -ge 40 ]; then
  echo "ok 1 - the header declares the API ($(printf '%s\n' "$declared" | wc -l) functions)"
else
  echo "not ok 1 - could not read the CORDON_API declarations of $header"
fi
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
if [ -z "$missing" ]; then
  echo "ok 2 - every declared function is exported"
else
  echo "not ok 2 - declared but not exported: $(echo $missing)"
fi
if [ -z "$extra" ]; then
  echo "ok 3 - nothing else is exported"
else
  echo "not ok 3 - exported but not in the public header: $(echo $extra)"
fi
# every exported function is pinned to a release node by name (no wildcard), and every
# one has the node's version
map=$(dirname "$0")/../../src/lib/libcordon.map
mapped=$(grep -oE '^ +cordon_[a-z0-9_]+;' "$map" | tr -d ' ;' | sort -u)
unmapped=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$mapped"))
if [ -z "$unmapped" ] && ! grep -qE '^ +cordon_\*' "$map"; then
  echo "ok 4 - every function is named in a release node of the map"
else
  echo "not ok 4 - not named in src/lib/libcordon.map (add them to the node of this release): $(echo $unmapped)"
fi
unversioned=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWi]$/ && $3 ~ /^cordon_/ && $3 !~ /@@?LIBCORDON_[0-9.]+$/ {print $3}')
if [ -z "$unversioned" ]; then
  echo "ok 5 - every exported function carries its release's version node"
else
  echo "not ok 5 - without a LIBCORDON_ version: $(echo $unversioned)"
fi
