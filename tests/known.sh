# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/known.sh, sourced by the lint passes with a baseline (tests/analyze.sh,
# tests/cppcheck.sh): a file of reports, one "FILE: message [id]" per line, where the tool
# is wrong; comments and blank lines are skipped.

# known_load FILE: the associative array `want`, each listed report -> how often listed.
known_load() {
  declare -gA want=()
  [ -f "$1" ] || return 0
  local line
  while IFS= read -r line; do
    case $line in '' | '#'*) continue ;; esac
    want[$line]=$((${want[$line]:-0} + 1))
  done <"$1"
}

# known_stale PASS FILE TOOL: a FAIL line for each report FILE lists that TOOL no longer
# made (so that the list only shrinks); status 1 when there was one.
known_stale() {
  local key ret=0
  for key in "${!want[@]}"; do
    [ "${want[$key]}" -gt 0 ] || continue
    echo "FAIL $1: $2 lists '$key', which $3 no longer reports: remove the line"
    ret=1
  done
  return $ret
}
