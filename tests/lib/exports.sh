#!/usr/bin/env bash
# The boundary: libcordon.so exports exactly the functions include/cordon.h declares with
# CORDON_API, and nothing else (the export map, src/lib/libcordon.map, and
# -fvisibility=hidden together). TAP output, for meson's unit suite.
#   usage: exports.sh LIBCORDON_SO CORDON_H
set -uo pipefail
so=$1 header=$2
echo "1..3"
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
