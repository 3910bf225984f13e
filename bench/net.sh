#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Network benchmark: bulk throughput and the time a new connection takes through cordon's
# bridge (the path of --network proxy's bridged proxies and --forward-port) and through its
# filtering proxy (a CONNECT tunnel), against direct loopback TCP and against socat doing
# the same bridging, in the same run, alternating.
#
#   bench/net.sh [-r ROUNDS] [-b BYTES] [-n CONNECTIONS] [--cordon PATH]
#
# Each round runs every case once, in turn: `bulk` sends BYTES (default 1 GB) over one
# connection and reports MB/s (from the first byte to the server's acknowledgement of the
# EOF); `conn` opens CONNECTIONS (default 500) connections one after another, one byte
# each way, and reports the median per connection in microseconds. The figures are the
# medians over ROUNDS (default 5). The clients of the cordon cases run inside the sandbox
# (only their own transfer is timed, not cordon's start-up); the server (bench/netbench.c)
# is on the host's loopback:
#   direct   client -> server
#   bridge   cordon run --forward-port P: client -> 127.0.0.1:P inside -> helper -> server
#   proxy    cordon run --allow-domain 127.0.0.1: client -> CONNECT via 127.0.0.1:3128 -> server
#   socat    client -> socat TCP-LISTEN,fork -> TCP:server
#   socat2   client -> socat TCP-LISTEN,fork -> UNIX -> socat UNIX-LISTEN,fork -> TCP:server
#            (the shape of the Codex helper's TCP->UDS->TCP bridge)
#   floor    client -> bench/netfloor.c -> server: the least any relay can do (blocking
#            splice(2) loops, nothing else): what a relay can reach on this machine
# Targets (issue 12): bridge >= 0.8 x direct and >= 2 x socat in throughput; at most 100 us
# added to the median new connection. Timing never fails the run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
rounds=5
bytes=1000000000
conns=500
cordon=${CORDON:-$top/build/cordon}

die() { echo "net.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -r) rounds=${2:?}; shift 2 ;;
    -b) bytes=${2:?}; shift 2 ;;
    -n) conns=${2:?}; shift 2 ;;
    --cordon) cordon=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not built (meson setup build && ninja -C build)"
socat=$(command -v socat || true)
[ -n "$socat" ] || echo "net.sh: socat not found (apt-get install socat): measuring without it" >&2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-netbench.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"
mkdir "$tmp/ws"
"${CC:-cc}" -O2 -o "$tmp/netbench" "$here/netbench.c" || die "cannot build bench/netbench.c"
"${CC:-cc}" -O2 -o "$tmp/netfloor" "$here/netfloor.c" || die "cannot build bench/netfloor.c"
nb=$tmp/netbench

"$nb" serve "$tmp/port" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.02; done
P=$(cat "$tmp/port")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cases=(direct bridge proxy floor)
F=$(free_port)
"$tmp/netfloor" "$F" "$P" &
pids+=($!)
if [ -n "$socat" ]; then
  S1=$(free_port)
  "$socat" "TCP-LISTEN:$S1,bind=127.0.0.1,fork,reuseaddr" "TCP:127.0.0.1:$P" &
  pids+=($!)
  S2=$(free_port)
  "$socat" "TCP-LISTEN:$S2,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$tmp/bridge.sock" &
  pids+=($!)
  "$socat" "UNIX-LISTEN:$tmp/bridge.sock,fork" "TCP:127.0.0.1:$P" &
  pids+=($!)
  cases+=(socat socat2)
  sleep 0.3
fi

# run CASE bulk|ping ARGS: one measurement, printed on stdout
run() {
  local c=$1 mode=$2
  shift 2
  cd "$tmp/ws"
  case $c in
    direct) "$nb" "$mode" "$P" "$@" ;;
    bridge) "$cordon" run --allow-ro "$tmp" --forward-port "$P" -- "$nb" "$mode" "$P" "$@" ;;
    proxy) "$cordon" run --allow-ro "$tmp" --allow-domain 127.0.0.1 -- "$nb" "$mode" 3128 "$@" "127.0.0.1:$P" ;;
    floor) "$nb" "$mode" "$F" "$@" ;;
    socat) "$nb" "$mode" "$S1" "$@" ;;
    socat2) "$nb" "$mode" "$S2" "$@" ;;
  esac
}

declare -A bulk_r conn_r
for ((r = 0; r < rounds; r++)); do
  for c in "${cases[@]}"; do
    bulk_r[$c]+="$(run "$c" bulk "$bytes") "
    conn_r[$c]+="$(run "$c" ping "$conns" | cut -d' ' -f1) "
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
declare -A bulk conn
for c in "${cases[@]}"; do
  bulk[$c]=$(printf '%s' "${bulk_r[$c]}" | median)
  conn[$c]=$(printf '%s' "${conn_r[$c]}" | median)
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
added() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; }

echo "bench/net.sh: $rounds rounds, $bytes bytes per bulk transfer, $conns connections per round; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %12s %10s %10s %16s %14s\n' case "bulk MB/s" "÷ direct" "÷ socat" "conn median µs" "added µs"
for c in "${cases[@]}"; do
  printf '%-8s %12s %10s %10s %16s %14s\n' "$c" "${bulk[$c]}" "$(ratio "${bulk[$c]}" "${bulk[direct]}")" \
    "$([ -n "$socat" ] && ratio "${bulk[$c]}" "${bulk[socat]}" || echo -)" "${conn[$c]}" "$(added "${conn[$c]}" "${conn[direct]}")"
done
echo "targets: bridge bulk >= 0.80 x direct and >= 2.00 x socat; at most +100 us per new connection"
echo "(floor: the least a relay can do here; bridge ÷ floor = $(ratio "${bulk[bridge]}" "${bulk[floor]}") in bulk)"
