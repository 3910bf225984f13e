#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Faults and load (meson test --suite stress, in the unsanitized build, as root and unprivileged):
#   - kill -9 of cordon at every one of its own system calls (a deterministic sweep, with
#     the plain sandbox, --base host, resource limits and --isolation landlock), and at
#     random moments, three in four within the first 3 ms: no process (a double-forked
#     grandchild included), cgroup, mount, stub or temporary file is left;
#   - 1,000 sequential runs leave the host's open files, memory and mount table as they were;
#   - 64 concurrent runs on one workspace all succeed;
#   - a full file system under --status-json or the workspace gives a clear error, exit 125
#     (root only: it mounts a small tmpfs in a mount namespace of its own).
# Counts are environment variables, for a quick local run:
#   CORDON_FAULT_TRIALS (100), CORDON_SEQ_RUNS (1000), CORDON_CONCURRENT (64)
. "$(dirname "$0")/../e2e/lib.sh"
STRESS_DIR=$(cd "$(dirname "$0")" && pwd)

TRIALS=${CORDON_FAULT_TRIALS:-100}
SEQ_RUNS=${CORDON_SEQ_RUNS:-1000}
CONCURRENT=${CORDON_CONCURRENT:-64}

# How long cordon's helpers may take to finish after cordon is gone: PID 1 dies of its
# parent-death signal, the stub and cgroup janitors then clean up.
GRACE=3

# ------------------------------------------------------------------------------------
# kill -9 at random moments

# The trials run from Python: precise delays (0-20 ms after the start), and a host-side
# scan of /proc that is fast enough not to shift them.  It prints one line per problem
# ("LEFT ...") and a summary ("TRIALS n killed_before_command=a killed_after=b").
KILL_TRIALS='
import os, random, signal, subprocess, sys, time

cordon, ws, tmpdir, trials, grace, tag = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
# then: run options, "--", and the cgroup directories where the run makes its own
rest = sys.argv[7:]
opts = rest[:rest.index("--")] if "--" in rest else rest
cgdirs = rest[rest.index("--") + 1:] if "--" in rest else []
uid = os.getuid()

def run_cgroups(pid):
    out = []
    for d in cgdirs:
        try:
            out += [os.path.join(d, n) for n in os.listdir(d) if n.startswith("cordon-%d-" % pid)]
        except OSError:
            pass
    return out

def mounts():
    # only mount points where cordon works (the directories of this test), as the other
    # trials count them: other tests on the same machine mount and unmount things meanwhile
    near = (os.path.dirname(ws), tmpdir)
    with open("/proc/self/mountinfo") as f:
        return sum(1 for line in f if line.split()[4].startswith(near))

def ours_in(d):
    # entries of d owned by this uid: what cordon, running as us, could have left
    out = set()
    for n in os.listdir(d):
        try:
            if os.lstat(os.path.join(d, n)).st_uid == uid:
                out.add(n)
        except OSError:
            pass
    return out

def with_marker(mark):
    # every process whose command line holds the marker: the sandboxed sleep, cordon, and
    # cordon'"'"'s janitors (copies of cordon, same command line)
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if mark.encode() in f.read():
                    found.append(int(p))
        except OSError:
            pass
    return found

def sleeper_started(mark):
    for p in with_marker(mark):
        try:
            with open("/proc/%d/cmdline" % p, "rb") as f:
                if f.read().split(b"\0")[0].endswith(b"sleep"):
                    return True
        except OSError:
            pass
    return False

ws_before = sorted(os.listdir(ws))
tmp_before = ours_in("/tmp")
tmpdir_before = sorted(os.listdir(tmpdir))
mounts_before = mounts()
before = after = 0
problems = 0
for i in range(trials):
    mark = "%s%03d" % (tag, i)
    # three trials in four within the first 3 ms: setup, where the windows are
    delay = random.uniform(0.0002, 0.003) if i % 4 else random.uniform(0, 0.020)
    # a grandchild in a session of its own, too: without a PID namespace (landlock) only
    # the supervisor can take it down
    p = subprocess.Popen([cordon, "run"] + opts + ["--", "sh", "-c", "setsid sleep 5.%s & exec sleep 5.%s" % (mark, mark)], cwd=ws, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, TMPDIR=tmpdir))
    time.sleep(delay)
    started = sleeper_started(mark)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    if started:
        after += 1
    else:
        before += 1
    deadline = time.time() + grace
    while time.time() < deadline:
        left = with_marker(mark)
        ws_now = sorted(os.listdir(ws))
        cg = run_cgroups(p.pid)
        if not left and ws_now == ws_before and not cg:
            break
        time.sleep(0.01)
    what = "trial %d (killed %.1f ms after the start, %s the command started)" % (i, delay * 1000, "after" if started else "before")
    if left:
        problems += 1
        cmds = []
        for q in left:
            try:
                cmds.append("%d:%s" % (q, open("/proc/%d/cmdline" % q, "rb").read().replace(b"\0", b" ").decode(errors="replace")[:60]))
            except OSError:
                pass
        print("LEFT processes %s: %s" % (what, "; ".join(cmds)))
        for q in left:
            try:
                os.kill(q, signal.SIGKILL)
            except OSError:
                pass
    if ws_now != ws_before:
        problems += 1
        extra = sorted(set(ws_now) - set(ws_before))
        print("LEFT in the workspace %s: %s" % (what, sorted(set(ws_now) ^ set(ws_before))))
        # remove them (empty directories: stubs), so that the next trial starts clean
        for n in extra:
            try:
                os.rmdir(os.path.join(ws, n))
            except OSError:
                pass
    if cg:
        problems += 1
        print("LEFT cgroups %s: %s" % (what, cg))
    m = mounts()
    if m != mounts_before:
        problems += 1
        print("LEFT mounts %s: %d lines in /proc/self/mountinfo, %d before" % (what, m, mounts_before))
        mounts_before = m
    t = sorted(os.listdir(tmpdir))
    if t != tmpdir_before:
        problems += 1
        print("LEFT in TMPDIR %s: %s" % (what, sorted(set(t) ^ set(tmpdir_before))))
        tmpdir_before = t
# (what the test scripts themselves make there, when other test files run at the same
# time, does not come from cordon)
import re
harness = ("cordon-e2e-", "cordon-tests.", "cordon-bootstrap.", "cordon-fuzz-build.", "cordon-test-", "cordon-test.")
def foreign(n):
    return n.startswith(harness) or re.match(r"^cc[A-Za-z0-9]{6}\.[a-z]+$", n)  # a compiler'"'"'s
new_tmp = set(n for n in ours_in("/tmp") - tmp_before if not foreign(n))
if new_tmp:
    time.sleep(2)  # what comes and goes belongs to someone else
    new_tmp &= ours_in("/tmp")
if new_tmp:
    problems += 1
    print("LEFT in /tmp after the trials: %s" % sorted(new_tmp)[:10])
print("TRIALS %d killed_before_command=%d killed_after=%d problems=%d" % (trials, before, after, problems))
'

# The sweep: cordon killed on entry to its first, second, third ... system call (killat.c,
# a ptrace driver), until it runs to the end. The command is short (it exits after 0.1 s,
# so that the kills during cordon's teardown cost little) but leaves a 30 s grandchild in
# a session of its own that only the sandbox's end can take down. Same checks as above;
# prints "SWEEP n" (the system calls cordon made) and a line per problem.
KILL_SWEEP='
import os, subprocess, sys, time
killat, cordon, ws, tmpdir, grace, tag = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6]
rest = sys.argv[7:]
opts = rest[:rest.index("--")] if "--" in rest else rest
cgdirs = rest[rest.index("--") + 1:] if "--" in rest else []

def with_marker(mark):
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if mark.encode() in f.read():
                    found.append(int(p))
        except OSError:
            pass
    return found

def run_cgroups():
    out = []
    for d in cgdirs:
        try:
            out += [os.path.join(d, n) for n in os.listdir(d) if n.startswith("cordon-")]
        except OSError:
            pass
    return out

def mounts():
    # only mount points where cordon works (the directories of this test): other tests on the
    # same machine mount and unmount things of their own meanwhile
    near = (os.path.dirname(ws), tmpdir)
    with open("/proc/self/mountinfo") as f:
        return sum(1 for line in f if line.split()[4].startswith(near))

ws_before, tmp_before, mounts_before, cg_before = sorted(os.listdir(ws)), sorted(os.listdir(tmpdir)), mounts(), set(run_cgroups())
n = 0
while n < 5000:
    n += 1
    mark = "%s%04d" % (tag, n)
    rc = subprocess.call([killat, str(n), cordon, "run"] + opts + ["--", "sh", "-c", "setsid sleep 30.%s & sleep 0.1" % mark],
                         cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, TMPDIR=tmpdir))
    if rc == 3:
        break
    if rc != 0:
        print("LEFT nothing, but the driver failed at system call %d (status %d)" % (n, rc))
        break
    deadline = time.time() + grace
    while True:
        left, ws_now, t, cg = with_marker(mark), sorted(os.listdir(ws)), sorted(os.listdir(tmpdir)), set(run_cgroups()) - cg_before
        if (not left and ws_now == ws_before and t == tmp_before and not cg) or time.time() > deadline:
            break
        time.sleep(0.005)
    what = "killed at system call %d" % n
    if left:
        print("LEFT processes %s: %s" % (what, left))
        for q in left:
            try:
                os.kill(q, 9)
            except OSError:
                pass
    if ws_now != ws_before:
        print("LEFT in the workspace %s: %s" % (what, sorted(set(ws_now) ^ set(ws_before))))
        for x in set(ws_now) - set(ws_before):
            try:
                os.rmdir(os.path.join(ws, x))
            except OSError:
                pass
    if t != tmp_before:
        print("LEFT in TMPDIR %s: %s" % (what, sorted(set(t) ^ set(tmp_before))))
        for x in set(t) - set(tmp_before):
            subprocess.call(["rm", "-rf", os.path.join(tmpdir, x)])
    if cg:
        print("LEFT cgroups %s: %s" % (what, sorted(cg)))
        cg_before |= cg
    m = mounts()
    if m != mounts_before:
        print("LEFT mounts %s: %d lines in /proc/self/mountinfo, %d before" % (what, m, mounts_before))
        mounts_before = m
print("SWEEP %d" % (n - 1))
'

# kill9_sweep [RUN OPTION... [-- CGROUP DIR...]]
kill9_sweep() {
  command -v cc >/dev/null || skip_case "no C compiler for tests/stress/killat.c"
  [ -x "$T/killat" ] || cc -O1 -o "$T/killat" "$STRESS_DIR/killat.c" || die "cannot compile tests/stress/killat.c"
  "$T/killat" 1 true >/dev/null 2>&1 || skip_case "ptrace is not allowed here (killat cannot trace its own child)"
  mkdir -p "$CT/tmpdir"
  [ -e "$WS/file" ] || { echo data >"$WS/file"; mkdir "$WS/dir"; }
  local out summary bad
  out=$("$PY" -c "$KILL_SWEEP" "$T/killat" "$CORDON" "$WS" "$CT/tmpdir" "$GRACE" "$(new_mark)" "$@")
  summary=$(printf '%s\n' "$out" | grep '^SWEEP ' || true)
  [ -n "$summary" ] || die "the sweep printed no summary: $(printf '%s' "$out" | head -c 400)"
  echo "# kill -9 sweep ($*): killed at each of cordon's $(echo "$summary" | cut -d' ' -f2) system calls"
  [ "$(echo "$summary" | cut -d' ' -f2)" -ge 20 ] || die "the sweep saw only $summary system calls: is cordon traced at all?"
  bad=$(printf '%s\n' "$out" | grep '^LEFT ' || true)
  [ -z "$bad" ] || die "$(printf '%s\n' "$bad" | wc -l) problem(s) after kill -9 of cordon: $(printf '%s\n' "$bad" | head -n 3)"
  assert_file_content "$WS/file" "data"
}

# The limits the fault tests run with (CORDON_FAULT_LIMITS overrides).  As root without a
# cgroup (a read-only /sys/fs/cgroup, as in a container) --limit-pids is refused before
# anything starts (README, "Resource limits"): there they do without it, so that a kill
# still meets a run with limits at work.
limits_opts() {
  if [ -n "${CORDON_FAULT_LIMITS:-}" ]; then
    echo "$CORDON_FAULT_LIMITS"
  elif [ "$MY_UID" -eq 0 ] && "$CORDON" explain --limit-pids 100 --limit-memory 512M --limit-cpu 60 2>/dev/null |
    grep -q '^limits (rlimits'; then
    echo "--limit-memory 512M --limit-cpu 60"
  else
    echo "--limit-pids 100 --limit-memory 512M --limit-cpu 60"
  fi
}
limits_dirs() {
  # shellcheck disable=SC2046
  "$CORDON" explain $(limits_opts) 2>/dev/null |
    sed -n 's/^limits (cgroup v[12]: cgroups\{0,1\} of the run.s own under \(.*\))$/\1/p' | tr ' ' '\n'
}

landlock_ok() {
  "$CORDON" run --isolation landlock -- true >/dev/null 2>&1
}

t_kill9_sweep() {
  kill9_sweep
  kill9_sweep --base host
  local dirs=()
  mapfile -t dirs < <(limits_dirs)
  # shellcheck disable=SC2046
  kill9_sweep $(limits_opts) -- "${dirs[@]}"
  if landlock_ok; then
    kill9_sweep --isolation landlock
  else
    echo "# kill -9 sweep: --isolation landlock does not run here ($("$CORDON" run --isolation landlock -- true 2>&1 | head -c 200))"
  fi
}

# kill -9 of every process of a run at once (cordon, its janitors, PID 1: as a cgroup
# kill or the OOM killer does): the sandbox dies with its PID 1; the run's cgroups, which
# no janitor is left to remove, are removed by the next run with limits.
t_kill9_everything() {
  local dirs=() m pid pids i left before
  mapfile -t dirs < <(limits_dirs)
  echo data >"$WS/file"
  before=$(snapshot "$WS")
  m=$(new_mark)
  # shellcheck disable=SC2046
  "$CORDON" run $(limits_opts) -- sleep "1000.$m" </dev/null >/dev/null 2>&1 &
  pid=$!
  track_pid "$pid" "$CORDON"
  wait_for_sleepers "$m" 10 >/dev/null || die "the command did not start"
  pids=$(for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "1000\.$m" && echo "${p#/proc/}"
  done; true)
  # stopped first, so that none of them (a janitor woken by cordon's death) acts in between
  # shellcheck disable=SC2086
  kill -STOP $pids 2>/dev/null || true
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  wait_no_sleepers "$m" "$GRACE" || { reap_sleepers "$m"; die "the sandbox outlived a kill of all its processes"; }
  if [ "${#dirs[@]}" -gt 0 ] && [ -n "${dirs[0]}" ]; then
    left=$(for d in "${dirs[@]}"; do ls -d "$d"/cordon-"$pid"-* 2>/dev/null; done; true)
    [ -n "$left" ] || die "positive control: with its janitor killed too, the run's cgroup should be left (none under ${dirs[*]})"
    # shellcheck disable=SC2046
    expect_ok run $(limits_opts) -- true
    for ((i = 0; i < GRACE * 20; i++)); do
      left=$(for d in "${dirs[@]}"; do ls -d "$d"/cordon-"$pid"-* 2>/dev/null; done; true)
      [ -z "$left" ] && break
      sleep 0.05
    done
    [ -z "$left" ] || die "the next run did not remove the stale cgroups: $left"
  else
    echo "# limits by rlimits here ($(limits_opts)): no cgroup to leave"
    # shellcheck disable=SC2046
    expect_ok run $(limits_opts) -- true
  fi
  # and whatever the killed run left in the workspace, the next one cleaned up
  wait_unchanged "$before" "$WS" "$GRACE" "the workspace after a kill of every process and one more run"
}

t_kill9_random_landlock() {
  landlock_ok || skip_case "--isolation landlock does not run here: $("$CORDON" run --isolation landlock -- true 2>&1 | head -c 200)"
  kill9_trials $((TRIALS / 2)) --isolation landlock
}

# kill9_trials N [RUN OPTION... [-- CGROUP DIR...]]
kill9_trials() {
  local n=$1
  shift
  mkdir -p "$CT/tmpdir"
  # a workspace with content, so that "nothing left" is not "nothing there"
  echo data >"$WS/file"
  mkdir "$WS/dir"
  local out
  out=$("$PY" -c "$KILL_TRIALS" "$CORDON" "$WS" "$CT/tmpdir" "$n" "$GRACE" "$(new_mark)" "$@")
  local summary
  summary=$(printf '%s\n' "$out" | grep '^TRIALS ' || true)
  [ -n "$summary" ] || die "the trial driver printed no summary: $(printf '%s' "$out" | head -c 400)"
  echo "# kill -9 trials: $summary"
  local bad
  bad=$(printf '%s\n' "$out" | grep '^LEFT ' || true)
  [ -z "$bad" ] || die "$(printf '%s\n' "$bad" | wc -l) problem(s) after kill -9 of cordon: $(printf '%s\n' "$bad" | head -n 3)"
  assert_file_content "$WS/file" "data"
}

t_kill9_random() {
  kill9_trials "$TRIALS"
}

# The same with resource limits: the run's cgroups (where it can make them) are gone too.
t_kill9_random_limits() {
  local opts dirs=()
  read -ra opts <<<"$(limits_opts)"
  mapfile -t dirs < <("$CORDON" explain "${opts[@]}" 2>/dev/null |
    sed -n 's/^limits (cgroup v[12]: cgroups\{0,1\} of the run.s own under \(.*\))$/\1/p' | tr ' ' '\n')
  echo "# limits by: $("$CORDON" explain "${opts[@]}" 2>/dev/null | grep -m1 '^limits (' | cut -c1-120)"
  kill9_trials $((TRIALS / 2)) "${opts[@]}" -- "${dirs[@]}"
}

# ------------------------------------------------------------------------------------
# sequential runs: nothing accumulates

# the fewest allocated file handles in five looks 0.2 s apart (closed files are freed
# a little later, and whatever else runs on the host comes and goes)
file_handles() {
  local i n least=
  for ((i = 0; i < 5; i++)); do
    n=$(cut -f1 /proc/sys/fs/file-nr)
    { [ -z "$least" ] || [ "$n" -lt "$least" ]; } && least=$n
    sleep 0.2
  done
  echo "$least"
}
mem_available_kib() { sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo; }
mount_lines() { wc -l </proc/self/mountinfo; }

t_sequential_runs() {
  local fh0 mem0 mnt0 i rc fails=0 first_err="" start end
  # one run first, so that caches (page cache of the binary, slab) are warm before measuring
  expect_ok run -- true
  sleep 0.2
  fh0=$(file_handles)
  mem0=$(mem_available_kib)
  mnt0=$(mount_lines)
  start=$(date +%s%N)
  for ((i = 0; i < SEQ_RUNS; i++)); do
    rc=0
    "$CORDON" run -- true </dev/null >/dev/null 2>"$CT/err" || rc=$?
    if [ "$rc" -ne 0 ]; then
      fails=$((fails + 1))
      [ -n "$first_err" ] || first_err="run $i: status $rc: $(head -c 200 "$CT/err")"
    fi
  done
  end=$(date +%s%N)
  sleep 0.5
  local fh1 mem1 mnt1
  fh1=$(file_handles)
  mem1=$(mem_available_kib)
  mnt1=$(mount_lines)
  echo "# $SEQ_RUNS sequential runs in $(((end - start) / 1000000)) ms: open files $fh0 -> $fh1, MemAvailable $((mem0 / 1024)) -> $((mem1 / 1024)) MiB, mountinfo $mnt0 -> $mnt1 lines"
  [ "$fails" -eq 0 ] || die "$fails of $SEQ_RUNS runs of 'cordon run -- true' failed; first: $first_err"
  [ "$mnt1" -eq "$mnt0" ] || die "the host's mount table changed: $mnt0 -> $mnt1 lines"
  # The whole system's counts move with whatever else runs; a leak of one descriptor or
  # one page per run would show as 1000 of them.
  [ $((fh1 - fh0)) -lt 500 ] || die "open file handles on the host grew from $fh0 to $fh1 over $SEQ_RUNS runs"
  [ $((mem0 - mem1)) -lt $((128 * 1024)) ] || die "MemAvailable fell from $((mem0 / 1024)) to $((mem1 / 1024)) MiB over $SEQ_RUNS runs"
  # pgrep: 0 found some, 1 found none; anything else (127: not installed) proves nothing
  local left prc=0
  command -v pgrep >/dev/null || die "pgrep (procps) not found: cannot check for leftover processes; ./bootstrap.sh installs it"
  left=$(pgrep -u "$MY_UID" -f "^$CORDON run") || prc=$?
  [ "$prc" -le 1 ] || die "pgrep failed (status $prc): cannot check for leftover processes"
  [ -z "$left" ] || die "cordon processes left after the runs: $(echo $left)"
}

# ------------------------------------------------------------------------------------
# concurrent runs

t_concurrent_runs() {
  local i pids=() rc fails=0 why=""
  echo data >"$WS/shared"
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < CONCURRENT; i++)); do
    "$CORDON" run -- sh -c 'cat shared >/dev/null && echo "ok $1" && sleep 0.3' sh "$i" \
      </dev/null >"$CT/out.$i" 2>"$CT/err.$i" &
    pids+=($!)
  done
  for ((i = 0; i < CONCURRENT; i++)); do
    rc=0
    wait "${pids[$i]}" || rc=$?
    check_sanitizer "$CT/err.$i" "concurrent run $i"
    if [ "$rc" -ne 0 ] || [ "$(cat "$CT/out.$i")" != "ok $i" ]; then
      fails=$((fails + 1))
      [ -n "$why" ] || why="run $i: status $rc, output '$(head -c 100 "$CT/out.$i")', stderr: $(head -c 300 "$CT/err.$i" | _one_line)"
    fi
  done
  end=$(date +%s%N)
  echo "# $CONCURRENT concurrent runs on $(nproc) CPUs in $(((end - start) / 1000000)) ms, $fails failed"
  [ "$fails" -eq 0 ] || die "$fails of $CONCURRENT concurrent runs failed; first: $why"
  # and the shared workspace is as it was: the runs' stubs are all gone
  local i2 left=""
  for ((i2 = 0; i2 < GRACE * 20; i2++)); do
    left=$(ls -A "$WS")
    [ "$left" = shared ] && break
    sleep 0.05
  done
  assert_eq "$left" "shared" "the workspace after $CONCURRENT concurrent runs"
}

# ------------------------------------------------------------------------------------
# a full file system

# in_small_tmpfs SCRIPT ARG...: run sh SCRIPT in a mount namespace of its own where $1 is
# a 1 MiB tmpfs (with few inodes) that SCRIPT may fill; prints what SCRIPT prints.
in_small_tmpfs() {
  local script=$1
  shift
  timeout 60 unshare -m --propagation private sh -c '
d=$1
shift
mount -t tmpfs -o size=1m,nr_inodes=64,mode=0755 cordon-full "$d" || exit 99
'"$script" sh "$@"
}

# need_mount: skip the case unless it may mount a tmpfs (root, with unshare).
need_mount() {
  [ "$MY_UID" -eq 0 ] || skip_case "root only: it mounts a small tmpfs (in a mount namespace of its own)"
  command -v unshare >/dev/null || skip_case "unshare (util-linux) missing"
}

# FILL: fill the file system at $d, blocks and inodes.  (`true`, not `:`: a redirection
# that fails on a special built-in makes sh exit.)
FILL='
dd if=/dev/zero of="$d/fill" bs=64k 2>/dev/null
i=0; while { true >"$d/i$i"; } 2>/dev/null; do i=$((i+1)); done
'

t_full_disk_status_json() {
  need_mount
  mkdir "$CT/full"
  local out rc=0
  # one inode free: the file can be made but nothing written into it
  out=$(in_small_tmpfs "$FILL"'
rm -f "$d/i0"
"$1" run --status-json "$d/status.json" -- true 2>"$2"; echo "rc=$?"
[ -e "$d/status.json" ] && echo "left a truncated status file" || true' "$CT/full" "$CORDON" "$CT/err") || rc=$?
  [ "$rc" -ne 99 ] || skip_case "cannot mount a tmpfs here"
  ERRF=$CT/err
  ERR=$(cat "$ERRF")
  assert_contains "$out" "rc=125" "--status-json on a full file system"
  assert_cordon_stderr
  assert_contains "$ERR" "--status-json" "the message names the option"
  assert_contains "$ERR" "No space left on device" "the message names the cause"
  assert_not_contains "$out" "truncated" "no truncated status file"
}

t_full_disk_workspace() {
  need_mount
  mkdir "$CT/full"
  local out rc=0
  # The workspace's protected names (.codex, .cordon, .agents, ...) are refused by the
  # creation control, not held by anything made in the workspace: a workspace with no
  # inode left runs all the same, and nothing is left in it.  The command's own creation
  # fails as the file system says.
  out=$(in_small_tmpfs "$FILL"'
cd "$d" && "$1" run --workspace "$d" -- sh -c "true; touch new; echo touch=\$?; mkdir .codex; echo codex=\$?" 2>"$2"; echo "rc=$?"
echo "left: $(ls -A "$d" | grep -v -e "^fill$" -e "^i[0-9]*$" | tr "\n" " ")"' "$CT/full" "$CORDON" "$CT/err") || rc=$?
  [ "$rc" -ne 99 ] || skip_case "cannot mount a tmpfs here"
  ERRF=$CT/err
  ERR=$(cat "$ERRF")
  assert_contains "$out" "rc=0" "a workspace on a file system with no inode left"
  assert_contains "$out" "touch=1" "the command's own creation fails (no inode)"
  assert_contains "$ERR" "No space left on device" "touch names the cause"
  assert_contains "$out" "codex=1" "a protected name is refused"
  assert_contains "$ERR" "cordon: refused mkdir .codex" "the refusal is reported"
  local left
  left=$(printf '%s\n' "$out" | sed -n 's/^left: *//p')
  assert_eq "$left" "" "what setup left in the full workspace"
}

t_full_disk_tmpdir() {
  need_mount
  mkdir "$CT/full"
  local out rc=0
  # cordon keeps nothing in the caller's TMPDIR: a full one does not matter to it, and
  # the command's own TMPDIR is private (a tmpfs inside).
  out=$(in_small_tmpfs "$FILL"'
TMPDIR=$d "$1" run -- sh -c "echo x >\"\$TMPDIR/t\" && cat \"\$TMPDIR/t\"" 2>"$2"; echo "rc=$?"' "$CT/full" "$CORDON" "$CT/err") || rc=$?
  [ "$rc" -ne 99 ] || skip_case "cannot mount a tmpfs here"
  assert_contains "$out" "x" "the command's private TMPDIR works"
  assert_contains "$out" "rc=0" "cordon with a full TMPDIR"
}

t_full_disk_command_writes() {
  need_mount
  mkdir "$CT/full"
  local out rc=0
  # The command's own write failing is the command's failure, not cordon's.
  out=$(in_small_tmpfs "$FILL"'
rm -f "$d/i0" "$d/i1" "$d/i2" "$d/i3"
cd "$d" && "$1" run -- sh -c "echo x >>fill" 2>"$2"; echo "rc=$?"' "$CT/full" "$CORDON" "$CT/err") || rc=$?
  [ "$rc" -ne 99 ] || skip_case "cannot mount a tmpfs here"
  assert_not_contains "$out" "rc=0" "a write into a full workspace"
  assert_not_contains "$out" "rc=125" "a write into a full workspace (the command's failure, not cordon's)"
  [ -s "$CT/err" ] || die "the command's failed write left no message"
  ERRF=$CT/err
  if grep -q '^cordon: ' "$ERRF"; then die "cordon spoke for the command's failed write: $(head -c 200 "$ERRF")"; fi
}

run_case kill9_sweep t_kill9_sweep
run_case kill9_random t_kill9_random
run_case kill9_random_limits t_kill9_random_limits
run_case kill9_random_landlock t_kill9_random_landlock
run_case kill9_everything t_kill9_everything
run_case sequential_runs t_sequential_runs
run_case concurrent_runs t_concurrent_runs
run_case full_disk_status_json t_full_disk_status_json
run_case full_disk_workspace t_full_disk_workspace
run_case full_disk_tmpdir t_full_disk_tmpdir
run_case full_disk_command_writes t_full_disk_command_writes
finish
