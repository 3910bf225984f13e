# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for cordon's escape tests (tests/escape/test_*.sh): what a hostile command would
# try, each attempt expected to fail, each next to a positive control that shows the
# sandbox was working (the same route works for what the view does show).
#
# Built on tests/e2e/lib.sh (same layout, same TAP lines, same environment
# variables). Adds the attack programs: tests/escape/src/NAME.c, compiled with cc into the
# file's temporary directory ($BIN, which every case's view gets read-only), static when
# the C library allows it, so that they also run under --base empty.
#
# The programs print one line per attempt, "LABEL ok [detail]" or "LABEL ERRNONAME";
# want_refused and want_ok check those lines in $OUT.
ESC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../e2e/lib.sh
. "$ESC_DIR/../e2e/lib.sh"

ESC_SRC=$ESC_DIR/src
BIN=$T/bin
mkdir -p "$BIN"
chmod 0755 "$BIN"
CC=${CC:-cc}
ESC_STATIC=1

# esc_build NAME...: compile src/NAME.c into $BIN/NAME (once per test file). A file that
# cannot be compiled fails the whole test file: the suite would prove nothing.
esc_build() {
  local n log
  for n in "$@"; do
    [ -x "$BIN/$n" ] && continue
    log=$T/.cc-$n.log
    if ! "$CC" -static -O1 -w -I "$ESC_SRC" -o "$BIN/$n" "$ESC_SRC/$n.c" >"$log" 2>&1; then
      # no static C library: a dynamic build still runs under --base system and host
      ESC_STATIC=0
      if ! "$CC" -O1 -w -I "$ESC_SRC" -o "$BIN/$n" "$ESC_SRC/$n.c" >>"$log" 2>&1; then
        fail "build" "cannot compile $ESC_SRC/$n.c with $CC: $(tail -n 5 "$log")"
        finish
      fi
    fi
    chmod 0755 "$BIN/$n"
  done
}

# need_static: skip the case when the programs are not static (for --base empty).
need_static() {
  [ "$ESC_STATIC" = 1 ] || skip_case "no static C library (libc6-dev's libc.a): the attack programs cannot run under --base empty"
}

# esc ARG... -- PROGRAM ARG...: crun run with the attack programs visible (read-only).
# PROGRAM is a name in $BIN.
esc() {
  local args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    args+=("$1")
    shift
  done
  [ $# -gt 0 ] || die "esc: no -- PROGRAM"
  shift
  local prog=$1
  shift
  crun run --allow-ro "$BIN" "${args[@]}" -- "$BIN/$prog" "$@"
}

# esc_ok ARG... -- PROGRAM ARG...: as esc, and the run must exit 0.
esc_ok() {
  esc "$@"
  [ "$RC" = 0 ] || die "cordon run $(_argstr "$@"): expected exit 0, got $(last_run)"
}

# result LABEL: the result word of the attempt LABEL in $OUT ("ok", an errno name, or
# "" when the program never reported it).
result() { printf '%s\n' "$OUT" | awk -v l="$1" '$1 == l { print $2; exit }'; }

# detail LABEL: what follows "LABEL ok".
detail() { printf '%s\n' "$OUT" | awk -v l="$1" '$1 == l && $2 == "ok" { sub("^[^ ]+ ok ?", ""); print; exit }'; }

# want_refused LABEL [ERRNO...]: the attempt LABEL failed (with one of ERRNO, when given).
want_refused() {
  local label=$1 got
  shift
  got=$(result "$label")
  [ -n "$got" ] || die "the attack program did not report '$label' ($(last_run))"
  [ "$got" != ok ] || die "ESCAPE: '$label' succeeded inside the sandbox ($(last_run))"
  if [ $# -gt 0 ]; then
    local e
    for e in "$@"; do [ "$got" = "$e" ] && return 0; done
    die "'$label' failed with $got; expected $* ($(last_run))"
  fi
}

# want_ok LABEL: the attempt LABEL succeeded (a positive control).
want_ok() {
  local got
  got=$(result "$1")
  [ "$got" = ok ] || die "positive control '$1' did not work (got '${got:-nothing}'): the sandbox or the test is broken, so the refusals prove nothing ($(last_run))"
}

# host_run PROGRAM ARG...: run an attack program on the host (a positive control outside
# the sandbox); output in $OUT as for esc.
host_run() {
  RC=0
  "$BIN/$1" "${@:2}" >"$OUTF" 2>"$ERRF" || RC=$?
  OUT=$(cat "$OUTF")
  ERR=$(cat "$ERRF")
}
