#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the socket control costs (doc/seccomp.md): connect(2) and sendto(2) with an address
# go to the sandbox's PID 1, which performs them (and, for a pathname Unix socket, resolves
# the path and checks the socket file). Times bench/sockets.c (N loopback TCP connections,
# N UDP datagrams, N Unix stream connections and N Unix datagrams to sockets bound in the
# working directory) bare, in cordon without the command's filter (meson
# -Dcreation_control=false: no notification at all) and in cordon as shipped, alternating
# in one run, and prints the median microseconds per call of each.
#
# Runs in a directory under ${TMPDIR:-/tmp} (the workspace; its file system is printed:
# the Unix socket files live there, but a socket's cost is not the disk's).
#
#   bench/sockets.sh [-n REPEATS] [--calls N]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
repeats=5
calls=5000

die() { echo "sockets.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n|--repeats) repeats=${2:?}; shift 2 ;;
    --calls) calls=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $repeats in ''|*[!0-9]*) die "-n wants a number" ;; esac
case $calls in ''|*[!0-9]*) die "--calls wants a number" ;; esac

. "$here/common.sh" # build
build build-bench-cc
build build-bench-nocc -Dcreation_control=false

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-sockets.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
"${CC:-cc}" -O2 -static -o "$tmp/sockets" "$here/sockets.c" 2>/dev/null || "${CC:-cc}" -O2 -o "$tmp/sockets" "$here/sockets.c"
cd "$tmp"

echo "sockets benchmark: $(uname -sr), $(nproc) CPU, in $tmp ($(stat -f -c %T "$tmp")), load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A tcp udp utcp uudp
for ((r = 0; r < repeats; r++)); do
  for how in bare nocc cc; do
    case $how in
      bare) line=$("$tmp/sockets" "$calls") ;;
      *) line=$("$top/build-bench-$how/cordon" run -- "$tmp/sockets" "$calls") ;; # $tmp: the workspace
    esac
    # "tcp connect+accept: T us each; udp sendto+recv: U us each; unix connect+accept: ..."
    tcp[$how]+="$(echo "$line" | sed -n 's/.*tcp connect+accept: \([0-9.]*\) us.*/\1/p') "
    udp[$how]+="$(echo "$line" | sed -n 's/.*udp sendto+recv: \([0-9.]*\) us.*/\1/p') "
    utcp[$how]+="$(echo "$line" | sed -n 's/.*unix connect+accept: \([0-9.]*\) us.*/\1/p') "
    uudp[$how]+="$(echo "$line" | sed -n 's/.*unix sendto+recv: \([0-9.]*\) us.*/\1/p') "
  done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-28s %10s %14s %10s\n' "per call (median of $repeats)" bare "cordon, no ctl" cordon
printf '%-28s %10s %14s %10s\n' "TCP connect+accept (us)" "$(echo "${tcp[bare]}" | median)" "$(echo "${tcp[nocc]}" | median)" "$(echo "${tcp[cc]}" | median)"
printf '%-28s %10s %14s %10s\n' "UDP sendto+recv (us)" "$(echo "${udp[bare]}" | median)" "$(echo "${udp[nocc]}" | median)" "$(echo "${udp[cc]}" | median)"
printf '%-28s %10s %14s %10s\n' "Unix connect+accept (us)" "$(echo "${utcp[bare]}" | median)" "$(echo "${utcp[nocc]}" | median)" "$(echo "${utcp[cc]}" | median)"
printf '%-28s %10s %14s %10s\n' "Unix sendto+recv (us)" "$(echo "${uudp[bare]}" | median)" "$(echo "${uudp[nocc]}" | median)" "$(echo "${uudp[cc]}" | median)"
