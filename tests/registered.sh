#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/registered.sh TESTS_DIR REGISTERED...: every tests/{e2e,escape,stress}/test_*.sh is
# registered in tests/meson.build (a file missing from its lists would never run), and
# every registered file exists. TAP.
set -u
dir=$1
shift
declare -A reg=()
for f in "$@"; do reg[$f]=1; done
n=0 bad=0
for f in "$dir"/e2e/test_*.sh "$dir"/escape/test_*.sh "$dir"/stress/test_*.sh; do
  [ -e "$f" ] || continue
  rel=${f#"$dir"/}
  n=$((n + 1))
  if [ -n "${reg[$rel]:-}" ]; then
    echo "ok $n - $rel is registered"
  else
    echo "not ok $n - $rel is not in tests/meson.build's lists: add it there, or it never runs"
    bad=1
  fi
  unset "reg[$rel]"
done
for rel in "${!reg[@]}"; do
  n=$((n + 1))
  echo "not ok $n - tests/meson.build registers $rel, which does not exist"
  bad=1
done
echo "1..$n"
exit $bad
