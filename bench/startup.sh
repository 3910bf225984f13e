#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Start-up benchmark: cordon against bwrap, the namespace floor and bare `true`.
#
#   bench/startup.sh [-n RUNS] [-w WARMUP] [--out FILE] [--cordon PATH]
#                    [--extra NAME -- COMMAND...]
#
# Runs, alternating, as an unprivileged user (uid 65534 when started as root):
#   cordon  $CORDON run --base host -- true
#   bwrap   bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent --new-session true
#   floor   bench/floor.c: clone the namespaces, tmpfs root, read-only bind of /, /proc, pivot_root, true
#   true    /bin/true
# and prints median, p10, p90 (ms), median peak RSS (KiB) and the ratio of each median to
# bwrap's, ending with the project's targets. Timing never fails the run: the exit status
# is non-zero only when a command could not be run or did not exit 0.
#
# CORDON (or --cordon) defaults to build/cordon of this checkout; when that is not built
# yet the others are measured alone. --out FILE writes the figures as JSON.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")

runs=60
warmup=3
out=
cordon=${CORDON:-}
extra_name=
extra_cmd=()
target_ratio=0.60 # cordon's median start-up against bwrap's
target_rss=2048   # KiB, cordon's median peak RSS

die() { echo "startup.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    -n|--runs) runs=${2:?}; shift 2 ;;
    -w|--warmup) warmup=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --cordon) cordon=${2:?}; shift 2 ;;
    --extra)
      extra_name=${2:?}
      [ "${3:-}" = -- ] || die "--extra NAME -- COMMAND..."
      shift 3
      [ $# -gt 0 ] || die "--extra $extra_name: no command"
      extra_cmd=("$@")
      set --
      ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $runs in ''|*[!0-9]*) die "-n wants a number" ;; esac
case $warmup in ''|*[!0-9]*) die "-w wants a number" ;; esac

explicit_cordon=${cordon:+yes}
cordon=${cordon:-$top/build/cordon}
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
if [ ! -x "$cordon" ]; then
  [ -z "$explicit_cordon" ] || die "$cordon: not an executable"
  echo "startup.sh: $cordon is not built (meson setup build && ninja -C build): measuring without cordon" >&2
  cordon=
fi
bwrap=$(command -v bwrap || true)
[ -n "$bwrap" ] || echo "startup.sh: bwrap not found (apt-get install bubblewrap): measuring without it" >&2
if [ -n "$out" ]; then
  case $out in /*) ;; *) out=$PWD/$out ;; esac
fi

# Everything lives in a directory the unprivileged user can reach: the harness, the floor,
# and the workspace the commands start in (cordon exposes the current directory).
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/ws" "$tmp/home"

cc=${CC:-cc}
# The harness is linked statically when the toolchain can: its own resident set at fork
# is counted in every child's ru_maxrss, so the smaller it is the truer the RSS figures.
"$cc" -O2 -static -o "$tmp/startup" "$here/startup.c" 2>/dev/null ||
  "$cc" -O2 -o "$tmp/startup" "$here/startup.c"
floor_note=
if ! "$cc" -O2 -static -o "$tmp/floor" "$here/floor.c" 2>/dev/null; then
  "$cc" -O2 -o "$tmp/floor" "$here/floor.c"
  floor_note=" (dynamically linked: no static libc here)"
fi

drop=()
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$tmp/ws" "$tmp/home"
  chmod 700 "$tmp/home"
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups
        env HOME="$tmp/home" USER=nobody LOGNAME=nobody)
  [ -z "$out" ] || { touch "$out"; chown 65534 "$out"; }
  who="uid 65534 (dropped from root with setpriv)"
else
  who="uid $(id -u)"
fi

args=(-n "$runs" -w "$warmup")
[ -z "$bwrap" ] || args+=(--ref bwrap)
[ -z "$out" ] || args+=(--out "$out")
[ -z "$cordon" ] || args+=(--target-ratio cordon="$target_ratio" --target-rss cordon="$target_rss"
                          --cmd cordon "$cordon" run --base host -- true)
[ -z "$bwrap" ] || args+=(--cmd bwrap "$bwrap" --ro-bind / / --dev /dev --proc /proc
                          --unshare-all --die-with-parent --new-session true)
args+=(--cmd floor "$tmp/floor" --cmd true /bin/true)
[ -z "$extra_name" ] || args+=(--cmd "$extra_name" "${extra_cmd[@]}")

echo "cordon start-up benchmark: $(uname -sr), $(nproc) CPU, as $who"
echo "  cordon: ${cordon:-not built}"
echo "  bwrap:  ${bwrap:-not installed}${bwrap:+ ($("$bwrap" --version 2>/dev/null || echo '?'))}"
echo "  floor:  bench/floor.c$floor_note"
echo
cd "$tmp/ws"
rc=0
"${drop[@]}" "$tmp/startup" "${args[@]}" || rc=$?
exit "$rc"
