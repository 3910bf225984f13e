#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --limit-memory and the private tmpfs mounts. Files in /tmp, HOME, TMPDIR and /dev/shm
# live in memory; with the rlimit fallback nothing counted them (--limit-memory 64M let a
# command keep 1.2 GB there, each tmpfs growing to half of RAM). They are now directories
# of one tmpfs whose size is the limit, whatever enforces the limit on processes (a cgroup,
# which counts their pages too, or rlimits, which do not). Positive control: without the
# limit the same writes all succeed.
. "$(dirname "$0")/lib.sh"

# FILL: write up to $1 MiB into each private mount named after it, 1 MiB at a time, until
# a write fails; print "MOUNT MiB" for each, then "total MiB".
FILL='
import os, sys
want = int(sys.argv[1])
total = 0
seen = set()
chunk = b"\0" * (1 << 20)
for d in sys.argv[2:]:
    d = os.path.realpath(d)
    if d in seen:
        continue
    seen.add(d)
    n = 0
    try:
        with open(os.path.join(d, "fill"), "wb", buffering=0) as f:
            while n < want:
                f.write(chunk)
                n += 1
    except OSError:
        pass
    print(d, n, flush=True)
    total += n
print("total", total, flush=True)
'

t_tmpfs_capped_by_memory_limit() {
  # 40 MiB into each of four mounts: 160 MiB wanted, 64 MiB allowed in all
  crun run --limit-memory 64M -- sh -c '"$0" -c "$1" 40 /tmp /dev/shm "$HOME" "$TMPDIR"' "$PY" "$FILL"
  case $RC in
    0) ;;
    137) # a cgroup that counts the pages killed the writer: it could not keep them either
      assert_contains "$ERR" "memory limit" "a kill by the memory limit is reported" ;;
    *) die "expected exit 0 or 137, got $(last_run)" ;;
  esac
  local total
  total=$(printf '%s\n' "$OUT" | awk '$1 == "total" { print $2 }')
  if [ -n "$total" ]; then
    [ "$total" -le 64 ] || die "ESCAPE: $total MiB kept in the private tmpfs mounts under --limit-memory 64M ($OUT)"
    [ "$total" -ge 32 ] || die "the private mounts took only $total MiB: are they usable at all? ($OUT)"
  fi
  # positive control: without a limit the same writes succeed (100 MiB in two mounts)
  crun run -- sh -c '"$0" -c "$1" 50 /tmp /dev/shm' "$PY" "$FILL"
  [ "$RC" = 0 ] || die "positive control: expected exit 0, got $(last_run)"
  assert_eq "$(printf '%s\n' "$OUT" | awk '$1 == "total" { print $2 }')" 100 "positive control: 50 MiB each in /tmp and /dev/shm without a limit"
  # explain says so
  crun explain --limit-memory 64M
  assert_contains "$OUT" "shares one tmpfs of 64 MiB" "explain names the shared tmpfs"
}

run_case tmpfs_capped_by_memory_limit t_tmpfs_capped_by_memory_limit
finish
