#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the Rust crate and the Node package add over libcordon, in the same run (issue 20):
#   session   one command (`true`, its output collected) in a session: the C library's
#             calls (cordon_session_spawn_cmd + cordon_proc_wait, made through cordon-sys),
#             the crate's Session::output, the Node package's Session.run (its fast
#             path, libcordon in the process; and a published session, a `cordon
#             session exec` per command); the difference in ms (target: +0.2 ms at most)
#   output    `head -c SIZE /dev/zero` through the binding's spawn (Node: `cordon run`,
#             and a command of its fast path's session) against the same language's
#             plain pipe (std::process, child_process), and against that pipe with the
#             writer setsid (as the sandbox starts its command); ratio (target: >= 0.9)
#
#   bench/bindings.sh [--build DIR] [--blocks N] [--fifo] [-- BENCH OPTIONS...]   (--rounds N --size BYTES --output-rounds N)
#
#   --fifo    run the measured programs under SCHED_FIFO (chrt -f 10; root only): on a loaded
#             machine the ordinary scheduler's share for the command, which the sandbox
#             starts in a session of its own (setsid: a scheduling group of its own where
#             autogroups are on), swings the ratios; FIFO measures the pipes themselves
#
# Builds rust/cordon's `bench` example with Debian's cargo (offline, in a temporary
# directory) against DIR/libcordon.so (default: build/), runs it and node/bench/bench.js
# in alternating blocks, as uid 65534 when started as root, in $TMPDIR (a tmpfs or a disk:
# the figures say which). Timing never fails anything.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
build=$top/build
blocks=3
sched=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --blocks) blocks=${2:?}; shift 2 ;;
    --fifo) sched=(chrt -f 10); shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bindings.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$PWD/$build ;; esac
if [ ${#sched[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "bindings.sh: --fifo needs root (SCHED_FIFO)" >&2; exit 2; }
  command -v chrt >/dev/null || { echo "bindings.sh: --fifo needs chrt (util-linux)" >&2; exit 2; }
fi
[ -e "$build/libcordon.so" ] || { echo "bindings.sh: $build/libcordon.so not built (meson setup build && ninja -C build)" >&2; exit 2; }
cargo=/usr/bin/cargo
[ -x "$cargo" ] || cargo=$(command -v cargo) || { echo "bindings.sh: cargo not found (apt-get install cargo)" >&2; exit 2; }
command -v node >/dev/null || { echo "bindings.sh: node not found (apt-get install nodejs)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-bindings.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cp -R "$top/rust" "$tmp/rust"
cp -R "$top/node" "$tmp/node"
(cd "$tmp/rust" && PATH=/usr/bin:/bin CARGO_HOME=$tmp/cargo-home CARGO_TARGET_DIR=$tmp/target CORDON_LIB_DIR=$build \
  "$cargo" build --offline --release --quiet --example bench)
CORDON_LIB_DIR=$build CORDON_INCLUDE_DIR=$top/include node "$tmp/node/build.js"
chmod -R a+rX "$tmp"
mkdir -m 777 "$tmp/run" "$tmp/home"

drop=()
who="uid $(id -u)"
if [ "$(id -u)" = 0 ]; then
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home" USER=nobody LOGNAME=nobody)
  who="uid 65534 (dropped from root with setpriv)"
fi
fs=$(stat -f -c %T "$tmp")
echo "bindings benchmark: $(uname -sr), $(nproc) CPU, as $who, in $tmp ($fs), load $(cut -d' ' -f1-3 /proc/loadavg), ${sched[*]:-the ordinary scheduler}"
echo "rustc $(PATH=/usr/bin:/bin rustc --version | cut -d' ' -f2), node $(node --version)"
cd "$tmp/run"
for b in $(seq "$blocks"); do
  "${sched[@]}" "${drop[@]}" "$tmp/target/release/examples/bench" "$@" >"$tmp/rust.$b"
  "${sched[@]}" "${drop[@]}" env CORDON="$build/cordon" node "$tmp/node/bench/bench.js" "$@" >"$tmp/node.$b"
done
cat "$tmp"/rust.* "$tmp"/node.* | awk -v blocks="$blocks" '
  { v[$1] = v[$1] " " $2 }
  function med(name,   a, n, i, j, t) {
    n = split(v[name], a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((n + 1) / 2)]
  }
  END {
    c = med("session_c_ms"); r = med("session_rust_ms"); n = med("session_node_library_ms"); nc = med("session_node_cli_ms")
    printf "\nper session command, median of %d blocks (each the median of its rounds):\n", blocks
    printf "  C library (cordon-sys)   %.3f ms\n", c
    printf "  Rust crate               %.3f ms   %+.3f ms over C (target: +0.2 ms at most)\n", r, r - c
    if (n != "") printf "  Node package (addon)     %.3f ms   %+.3f ms over C (target: +0.2 ms at most)\n", n, n - c
    else printf "  Node package (addon)     not built (node/build.js said why, above)\n"
    printf "  Node package (CLI)       %.3f ms   %+.3f ms over C (a published session: cordon session exec per command)\n", nc, nc - c
    p = med("output_plain_mibs"); o = med("output_rust_mibs")
    np = med("output_node_plain_mibs"); no = med("output_node_mibs")
    printf "output throughput (head -c SIZE /dev/zero):\n"
    ps = med("output_plain_setsid_mibs")
    if (ps != "") printf "  Rust  std::process pipe, head in a session of its own (setsid) %6d MiB/s: %.2fx (the reference for what the scheduler alone costs)\n", ps, ps / p
    printf "  Rust  std::process pipe %6d MiB/s, through cordon %6d MiB/s: %.2fx (target: 0.9x)\n", p, o, o / p
    ns = med("output_node_session_library_mibs")
    nss = med("output_node_plain_setsid_mibs")
    if (nss != "") printf "  Node  child_process, head in a session of its own (setsid) %6d MiB/s: %.2fx (the reference for what the scheduler alone costs)\n", nss, nss / np
    printf "  Node  child_process     %6d MiB/s, through cordon run %6d MiB/s: %.2fx (target: 0.9x)\n", np, no, no / np
    if (ns != "") printf "  Node  child_process     %6d MiB/s, through a session (addon) %6d MiB/s: %.2fx (target: 0.9x)\n", np, ns, ns / np
  }'
