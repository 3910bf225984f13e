# SPDX-License-Identifier: Apache-2.0
# Helpers shared by the benchmark scripts (sourced, never run). The script that sources it
# sets $top (this checkout) and defines die().

# build DIR [MESON OPTION...]: configure $top/DIR once (-Dtests=false and the options) and
# build its cordon; a failure prints the log's end and dies.
build() {
  local dir=$top/$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dtests=false "$@" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; die "meson setup $dir failed"; }
  fi
  ninja -C "$dir" cordon >"$dir.log" 2>&1 || { tail -n 30 "$dir.log" >&2; die "building $dir failed"; }
  rm -f "$dir.log"
}
