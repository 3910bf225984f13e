#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Symlink swaps during setup: while cordon resolves and mounts rules whose paths run
# through WS/x, a host process swaps WS/x, as fast as it can, between a real directory and
# a symlink to a host directory outside the view (renameat2 RENAME_EXCHANGE, atomic).
# Whatever moment each run of cordon sees, setup must never write through the symlink
# (no stub, no mount point, no file in the host directory, which stays byte for byte and
# time for time unchanged), and each run either works or fails closed with 125. The
# command itself writes below WS/x too: the host directory is not in its view. Positive
# control: the swapper really swapped, and runs of both kinds happened where possible.
. "$(dirname "$0")/lib.sh"
esc_build tryops swapper

RUNS=${CORDON_ESCAPE_SWAP_RUNS:-30}

# race TARGET_PARENT RULE_KIND...: set up the swap over WS/x, run cordon RUNS times for
# each rule, check the target.
race() {
  local parent=$1 base=$2
  shift 2
  local target=$parent/target
  mkdir -p "$target/sub" "$WS/x/sub"
  echo "keep me" >"$target/keep"
  echo "target sub file" >"$target/sub/file"
  echo "workspace sub file" >"$WS/x/sub/file"
  chmod -R a+rX "$target" "$WS/x"
  touch -d '2020-01-01 00:00:00' "$target/sub" "$target"
  ln -s "$target" "$WS/x.alt"
  local before
  before=$(snapshot "$target" strict)
  "$BIN/swapper" "$WS/x" "$WS/x.alt" "$CT/stop" 120 >"$CT/swaps" 2>&1 &
  local sw=$!
  track_pid "$sw" swapper
  local rule i f ok=0 refused=0 other=""
  for rule in "$@"; do
    local args=()
    case $rule in
      deny-missing) args=(--deny "$WS/x/y") ;;
      deny-existing) args=(--deny "$WS/x/sub/file") ;;
      allow-ro) args=(--allow-ro "$WS/x/sub") ;;
      allow) args=(--allow "$WS/x/sub") ;;
    esac
    for ((i = 0; i < RUNS; i++)); do
      crun run --base "$base" --allow-ro "$BIN" "${args[@]}" -- "$BIN/tryops" \
        write w1 "$WS/x/sub/pwn" pwned write w2 "$WS/x/y/pwn" pwned write w3 "$WS/x/sub/file" pwned
      case $RC in
        0) ok=$((ok + 1)) ;;
        125) refused=$((refused + 1)) ;;
        *) other="$other $rule:$RC" ;;
      esac
    done
  done
  touch "$CT/stop"
  wait "$sw" || die "the swapper failed: $(cat "$CT/swaps")"
  [ "$(cat "$CT/swaps")" -gt 100 ] || die "positive control: the swapper hardly swapped ($(cat "$CT/swaps") exchanges)"
  assert_unchanged "$before" "$target" "ESCAPE: SETUP WROTE THROUGH THE SWAPPED SYMLINK into the host directory" strict
  # no stub left behind: neither for the missing denied path nor the protected names
  [ -d "$WS/x" ] && [ ! -L "$WS/x" ] || die "WS/x is not the directory again after the swapper stopped"
  local stubs=""
  for f in "$WS/x/y" "$WS/.cordon" "$WS/.codex" "$WS/.agents"; do
    if [ -e "$f" ]; then stubs="$stubs ${f#"$WS"/}"; fi
  done
  [ -z "$other" ] || die "runs ended with neither 0 nor 125:$other (141 is cordon killed by SIGPIPE: PID 1 failed setup before cordon sent it the go for the stubs)${stubs:+; stubs left in the workspace:$stubs}"
  [ -z "$stubs" ] || die "stubs left in the workspace after the runs:$stubs"
  [ $((ok + refused)) -gt 0 ] || die "no run at all"
  echo "$ok ran, $refused refused, $(cat "$CT/swaps") swaps" >"$CT/summary"
}

t_swap_base_system() {
  race "$OUTSIDE" system deny-missing deny-existing allow-ro allow
}

t_swap_base_host() {
  # under --base host the target is visible (read-only) to the command
  local d
  d=$(scratch_outside_tmp)
  race "$d" host deny-missing allow-ro allow
}

run_case swap_base_system t_swap_base_system
run_case swap_base_host t_swap_base_host
finish
