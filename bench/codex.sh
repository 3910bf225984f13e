#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Per-command cost of cordon as Codex's sandbox helper against the real one.
#
#   bench/codex.sh [-n RUNS] [-w WARMUP] [--out FILE] [--cordon PATH] [--helper PATH]
#
# Runs, alternating, as an unprivileged user (uid 65534 when started as root), the call
# Codex 0.169 makes for every command, with the profile of its workspace-write mode and
# `true` as the command:
#   cordon  cordon through a link named codex-linux-sandbox
#   helper  Codex 0.169's own helper (its Linux binary through a link of that name)
#   run     cordon run --base host -- true (cordon's plain start-up, for reference)
#   run_tmp cordon run --base host --allow /tmp -- true (the same with the host's /tmp
#           writable, as Codex's workspace-write profile has it)
# and prints medians and ratios to the helper's; the target is cordon at most 0.1 x the
# helper. The helper comes from --helper, $CORDON_CODEX_HELPER, or bootstrap.sh's install
# (CORDON_CODEX=1 ./bootstrap.sh); without it the benchmark says so and exits 2. Timing
# never fails: the exit status is non-zero only when a command could not be run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")

runs=100
warmup=5
out=
cordon=${CORDON:-$top/build/cordon}
helper=${CORDON_CODEX_HELPER:-}

die() { echo "codex.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    -n|--runs) runs=${2:?}; shift 2 ;;
    -w|--warmup) warmup=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --cordon) cordon=${2:?}; shift 2 ;;
    --helper) helper=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not built (meson setup build && ninja -C build)"
if [ -z "$helper" ]; then
  for c in "${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex; do
    [ -x "$c" ] && helper=$c && break
  done
fi
[ -n "$helper" ] && [ -x "$helper" ] ||
  die "the real Codex helper is not installed: CORDON_CODEX=1 ./bootstrap.sh, or --helper PATH (Codex's Linux binary)"
if [ -n "$out" ]; then case $out in /*) ;; *) out=$PWD/$out ;; esac; fi

# As a person runs Codex: the project in the home, the home outside /tmp (/var/tmp here,
# so that nothing of the benchmark lands in the real home), no TMPDIR.
tmp=$(mktemp -d /var/tmp/cordon-bench-codex.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/home/proj" "$tmp/bin-cordon" "$tmp/bin-helper"
cp "$cordon" "$tmp/cordon"
ln -s "$tmp/cordon" "$tmp/bin-cordon/codex-linux-sandbox"
ln -s "$helper" "$tmp/bin-helper/codex-linux-sandbox"

cc=${CC:-cc}
"$cc" -O2 -static -o "$tmp/startup" "$here/startup.c" 2>/dev/null || "$cc" -O2 -o "$tmp/startup" "$here/startup.c"

drop=()
if [ "$(id -u)" = 0 ]; then
  chown -R 65534:65534 "$tmp/home"
  chmod 700 "$tmp/home"
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env -u TMPDIR HOME="$tmp/home" USER=nobody LOGNAME=nobody)
  [ -z "$out" ] || { touch "$out"; chown 65534 "$out"; }
  who="uid 65534 (dropped from root with setpriv)"
else
  drop=(env -u TMPDIR HOME="$tmp/home")
  who="uid $(id -u)"
fi

ws=$tmp/home/proj
profile='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"}]},"network":"restricted"}'
call=(--sandbox-policy-cwd "$ws" --command-cwd "$ws" --permission-profile "$profile" -- /bin/true)

args=(-n "$runs" -w "$warmup" --ref helper --target-ratio cordon=0.10)
[ -z "$out" ] || args+=(--out "$out")
args+=(--cmd cordon "$tmp/bin-cordon/codex-linux-sandbox" "${call[@]}")
args+=(--cmd helper "$tmp/bin-helper/codex-linux-sandbox" "${call[@]}")
args+=(--cmd run "$tmp/cordon" run --base host -- /bin/true)
args+=(--cmd run_tmp "$tmp/cordon" run --base host --allow /tmp -- /bin/true)

echo "cordon as codex-linux-sandbox against Codex's helper: $(uname -sr), $(nproc) CPU, as $who"
echo "  cordon: $cordon"
echo "  helper: $helper ($("$helper" --version 2>/dev/null || echo '?'))"
echo "  bwrap on PATH (the helper prefers it): $(command -v bwrap || echo none)"
echo "  profile: Codex's workspace-write (root read; project root, /tmp, \$TMPDIR write; network restricted)"
echo "  project: \$HOME/proj, HOME outside /tmp, no TMPDIR"
echo "  mounts below /tmp (a writable /tmp binds them too): $(awk '$5 ~ "^/tmp/" {n++} END {print n+0}' /proc/self/mountinfo)"
echo
cd "$ws"
"${drop[@]}" "$tmp/startup" "${args[@]}"
