#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Start-up of cordon as bwrap against Debian's /usr/bin/bwrap, for the line Codex sends.
#
#   bench/bwrap.sh [-n RUNS] [-w WARMUP] [--out FILE] [--cordon PATH] [--bwrap PATH]
#                  [--tmpfs] [--peers RUNS] [--before PATH]
#
# Runs, alternating, as an unprivileged user (uid 65534 when started as root), Codex
# 0.169's workspace-write line (tests/e2e/bwrap/codex-0.169-workspace-write.args, with the
# workspace's protected names made to exist beforehand, as Codex does, and /bin/true as
# the command):
#   cordon  cordon through a link named bwrap
#   bwrap   the system's bubblewrap
#   bare    /bin/true alone (the floor both start from)
#   before  with --before PATH: another cordon (an earlier build), for a change's
#           before and after in the same run
# and prints medians and the ratio to bwrap's, with the kernel, CPUs, user and load
# average it ran with.  The workspace is on the disk (/var/tmp), or with --tmpfs on a
# tmpfs (/dev/shm).  --peers RUNS: then, per command, stock Codex (`codex sandbox -c
# sandbox_mode=workspace-write -- true`) and sandbox-runtime (`srt true`) with cordon's
# bwrap and with bubblewrap first on PATH, RUNS times each (they are installed by
# CORDON_CODEX=1 ./bootstrap.sh; skipped, with a word, when missing). cordon does more per run (its own PID 1,
# the creation control, seccomp), so the ratio says what those cost. Timing never fails:
# the exit status is non-zero only when a command could not be run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")

runs=100
warmup=5
out=
base=/var/tmp
peers=0
before=
cordon=${CORDON:-$top/build/cordon}
bwrap=/usr/bin/bwrap

die() { echo "bwrap.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    -n|--runs) runs=${2:?}; shift 2 ;;
    -w|--warmup) warmup=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --cordon) cordon=${2:?}; shift 2 ;;
    --bwrap) bwrap=${2:?}; shift 2 ;;
    --tmpfs) base=/dev/shm; shift ;;
    --peers) peers=${2:?}; shift 2 ;;
    --before) before=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not built (meson setup build && ninja -C build)"
[ -x "$bwrap" ] || die "$bwrap is not installed (apt-get install bubblewrap)"
if [ -n "$out" ]; then case $out in /*) ;; *) out=$PWD/$out ;; esac; fi

# The workspace outside /tmp, as a person's project is.
tmp=$(mktemp -d "$base/cordon-bench-bwrap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
ws=$tmp/home/proj
mkdir -p "$ws/.git" "$ws/.agents" "$ws/.codex" "$ws/.aws" "$tmp/bin"
# a copy named bwrap, not a symlink: Codex resolves a link (doc/codex.md)
cp "$cordon" "$tmp/bin/bwrap"
if [ -n "$before" ]; then
  [ -x "$before" ] || die "$before is not a cordon binary"
  mkdir -p "$tmp/before"
  cp "$before" "$tmp/before/bwrap"
fi
mkdir -p "$tmp/rbin"
ln -s "$bwrap" "$tmp/rbin/bwrap"

cc=${CC:-cc}
"$cc" -O2 -static -o "$tmp/startup" "$here/startup.c" 2>/dev/null || "$cc" -O2 -o "$tmp/startup" "$here/startup.c"

drop=()
if [ "$(id -u)" = 0 ]; then
  chown -R 65534:65534 "$tmp/home"
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home" USER=nobody LOGNAME=nobody)
  [ -z "$out" ] || { touch "$out"; chown 65534 "$out"; }
  who="uid 65534 (dropped from root with setpriv)"
else
  drop=(env HOME="$tmp/home")
  who="uid $(id -u)"
fi

line=(--as-pid-1 --new-session --die-with-parent --ro-bind / / --dev /dev --bind "$ws" "$ws"
  --ro-bind "$ws/.git" "$ws/.git")
for n in .agents .codex .aws; do line+=(--perms 555 --tmpfs "$ws/$n" --remount-ro "$ws/$n"); done
line+=(--unshare-user --unshare-pid --unshare-ipc --unshare-net --proc /proc --cap-drop ALL -- /bin/true)

args=(-n "$runs" -w "$warmup" --ref bwrap)
[ -z "$out" ] || args+=(--out "$out")
args+=(--cmd cordon "$tmp/bin/bwrap" "${line[@]}")
args+=(--cmd bwrap "$bwrap" "${line[@]}")
[ -z "$before" ] || args+=(--cmd before "$tmp/before/bwrap" "${line[@]}")
args+=(--cmd bare /bin/true)

echo "cordon as bwrap against $bwrap ($("$bwrap" --version)) and bare: $(uname -sr), $(nproc) CPU, as $who, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  cordon: $cordon"
echo "  line: Codex 0.169's workspace-write line, /bin/true as the command; workspace on $(stat -f -c %T "$tmp") ($base)"
echo
cd "$ws"
"${drop[@]}" "$tmp/startup" "${args[@]}"

[ "$peers" -gt 0 ] || exit 0
codex=${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}/node_modules/.bin/codex
srt=${CORDON_SRT_PREFIX:-/opt/cordon-test/srt}/node_modules/.bin/srt
pargs=(-n "$peers" -w 2)
if [ -x "$codex" ]; then
  echo
  echo "per command through stock Codex (codex sandbox, workspace-write, true), cordon's bwrap and bubblewrap first on PATH:"
  "${drop[@]}" "$tmp/startup" "${pargs[@]}" --ref codex-bwrap \
    --cmd codex-cordon env PATH="$tmp/bin:$PATH" "$codex" sandbox -c sandbox_mode=workspace-write -- true \
    --cmd codex-bwrap env PATH="$tmp/rbin:$PATH" "$codex" sandbox -c sandbox_mode=workspace-write -- true
else
  echo "(Codex is not installed at $codex: CORDON_CODEX=1 ./bootstrap.sh)"
fi
if [ -x "$srt" ]; then
  printf '%s\n' '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}' >"$tmp/home/.srt-settings.json"
  [ "$(id -u)" != 0 ] || chown 65534 "$tmp/home/.srt-settings.json"
  echo
  echo "per command through sandbox-runtime (srt true), cordon's bwrap and bubblewrap first on PATH:"
  "${drop[@]}" "$tmp/startup" "${pargs[@]}" --ref srt-bwrap \
    --cmd srt-cordon env PATH="$tmp/bin:$PATH" "$srt" true \
    --cmd srt-bwrap env PATH="$tmp/rbin:$PATH" "$srt" true
else
  echo "(sandbox-runtime is not installed at $srt: CORDON_CODEX=1 ./bootstrap.sh)"
fi
