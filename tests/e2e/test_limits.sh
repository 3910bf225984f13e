#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Resource limits: --limit-pids, --limit-memory, --limit-cpu (and the settings keys
# limitPids, limitMemory, limitCpu). A fork bomb, a memory hog and a busy loop are each
# stopped without harm to the host, through a cgroup of the run's own where the caller can
# make one (cgroup2, cgroup1) and through rlimits otherwise; bad values exit 125.
. "$(dirname "$0")/lib.sh"

# mechanism ARG...: how cordon would enforce these limits here (cgroup2, cgroup1, rlimit).
mechanism() {
  local line
  line=$("$CORDON" explain "$@" 2>/dev/null | grep -m1 '^limits (') || { echo unknown; return; }
  case $line in
    "limits (cgroup v2"*) echo cgroup2 ;;
    "limits (cgroup v1"*) echo cgroup1 ;;
    "limits (rlimits"*) echo rlimit ;;
    *) echo unknown ;;
  esac
}

# pids_refused ARG...: whether cordon must refuse these limits here: as root without a
# cgroup (a read-only /sys/fs/cgroup, as in a container by default), RLIMIT_NPROC would not
# bind, so --limit-pids fails closed (README, "Resource limits").
pids_refused() {
  [ "$MY_UID" -eq 0 ] && [ "$(mechanism "$@")" = rlimit ]
}

# expect_pids_refused ARG...: cordon run ARG... exits 125 before starting anything, with a
# message that names the limit, says why and what to do.
expect_pids_refused() {
  expect_exit 125 run "$@"
  assert_cordon_stderr
  assert_contains "$ERR" "a process limit cannot be enforced here" "the refusal says what"
  assert_contains "$ERR" "--limit-pids" "the refusal names the limit"
  assert_contains "$ERR" "does not apply RLIMIT_NPROC to root" "the refusal says why"
  assert_contains "$ERR" "run cordon as another user" "the refusal says what to do"
}

# cgroup_dirs ARG...: the directories the run's cgroups are made in (cgroup mechanisms).
cgroup_dirs() {
  "$CORDON" explain "$@" 2>/dev/null | sed -n 's/^limits (cgroup v[12]: cgroups\{0,1\} of the run.s own under \(.*\))$/\1/p' | tr ' ' '\n'
}

# json_limits FILE: "MECHANISM EXCEEDED,..." from a --status-json file.
json_limits() {
  "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
l = d.get("limits", "<missing>")
if l is None:
    print("null")
elif l == "<missing>":
    print("missing")
else:
    print(l["mechanism"], ",".join(l["exceeded"]) or "-")' "$1"
}

# ------------------------------------------------------------------------------------
# bad values

t_bad_values() {
  local bad opt
  for bad in "--limit-pids 0" "--limit-pids -1" "--limit-pids abc" "--limit-pids 1.5" "--limit-pids 99999999" \
    "--limit-pids=" "--limit-memory 0" "--limit-memory 12X" "--limit-memory 512Q" "--limit-memory 1000" \
    "--limit-memory -5M" "--limit-memory 99999999999T" "--limit-memory M" "--limit-memory 1.5G" \
    "--limit-cpu 0" "--limit-cpu 1.5" "--limit-cpu abc" "--limit-cpu 99999999999"; do
    # shellcheck disable=SC2086 # word splitting wanted: "--opt value"
    expect_exit 125 run $bad -- true
    assert_cordon_stderr
    opt=${bad%% *}
    assert_contains "$ERR" "${opt%%=*}" "the message for '$bad' names the option"
  done
  expect_exit 125 run --limit-pids
  assert_cordon_stderr
}

t_good_values() {
  if pids_refused --limit-pids 100 --limit-memory 512M --limit-cpu 60; then
    # as root without a cgroup: good values, refused all the same (no rlimit binds root)
    expect_pids_refused --limit-pids 100 --limit-memory 512M --limit-cpu 60 -- true
    expect_ok run --limit-memory 512M --limit-cpu 60 -- true
  else
    expect_ok run --limit-pids 100 --limit-memory 512M --limit-cpu 60 -- true
  fi
  expect_ok run --limit-memory 2G -- true
  expect_ok run --limit-memory 1073741824 --limit-memory=256MiB --limit-memory 1g -- true
}

t_settings_keys() {
  printf '{"sandbox": {"limitPids": 40, "limitMemory": "300M", "limitCpu": 20}}\n' >"$CT/s.json"
  crun explain --settings "$CT/s.json" -- true
  [ "$RC" = 0 ] || die "explain with limit keys: $(last_run)"
  assert_contains "$OUT" "pids     40 " "limitPids in explain"
  assert_contains "$OUT" "memory   300 MiB" "limitMemory in explain"
  assert_contains "$OUT" "cpu      20 s" "limitCpu in explain"
  # a flag wins over the settings file, in either order
  crun explain --limit-pids 7 --settings "$CT/s.json" --limit-cpu 3 -- true
  assert_contains "$OUT" "pids     7 " "--limit-pids over limitPids"
  assert_contains "$OUT" "cpu      3 s" "--limit-cpu over limitCpu"
  printf '{"sandbox": {"limitMemory": 67108864}}\n' >"$CT/n.json"
  crun explain --settings "$CT/n.json" -- true
  assert_contains "$OUT" "memory   64 MiB" "limitMemory as a number of bytes"
}

t_settings_bad() {
  local doc
  for doc in '{"sandbox": {"limitPids": "50"}}' '{"sandbox": {"limitPids": 0}}' '{"sandbox": {"limitPids": 2.5}}' \
    '{"sandbox": {"limitMemory": "lots"}}' '{"sandbox": {"limitMemory": true}}' '{"sandbox": {"limitMemory": 12}}' \
    '{"sandbox": {"limitCpu": -1}}' '{"sandbox": {"limitCpu": "10"}}'; do
    printf '%s\n' "$doc" >"$CT/bad.json"
    expect_exit 125 run --settings "$CT/bad.json" -- true
    assert_cordon_stderr
    assert_contains "$ERR" "bad.json:1:" "the message for $doc names the file and line"
    assert_contains "$ERR" "sandbox.limit" "the message for $doc names the key"
  done
}

# ------------------------------------------------------------------------------------
# the limits at work

# A host-side watcher: finds the sandbox by its `sleep N.MARK` process, then prints the
# most processes ever seen at once in its PID namespace (as /proc/PID/ns/pid reads),
# sampled every 20 ms until process UNTIL has exited ("none" if it never found it).
PIDNS_MAX='
import os, sys, time
mark, until = sys.argv[1], sys.argv[2]
ns, most = None, 0
while True:
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    if ns is None:
        for p in pids:
            try:
                argv = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
                if argv[0].endswith(b"sleep") and argv[1].endswith(b"." + mark.encode()):
                    ns = os.readlink("/proc/%s/ns/pid" % p)
                    break
            except (OSError, IndexError):
                pass
    n = 0
    for p in pids if ns else []:
        try:
            n += os.readlink("/proc/%s/ns/pid" % p) == ns
        except OSError:
            pass
    most = max(most, n)
    try:
        if open("/proc/%s/stat" % until).read().rsplit(")", 1)[1].split()[0] in "ZX":
            break
    except OSError:
        break
    time.sleep(0.02)
print(most if ns else "none")
'

BOMB='
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
'

t_fork_bomb() {
  local m mech cpid most rc=0 start end
  m=$(new_mark)
  mech=$(mechanism --limit-pids 50)
  if pids_refused --limit-pids 50; then
    # (not the bomb itself: were the refusal gone, it would run unlimited, as root)
    expect_pids_refused --limit-pids 50 --timeout 5 --status-json "$CT/st.json" -- sh -c 'echo started'
    assert_not_contains "$OUT" "started" "the refused run started its command"
    assert_eq "$(json_get "$CT/st.json" started)" "false" "status-json: the refused run never started"
    skip_case "as root without a cgroup ($mech) --limit-pids is refused (exit 125, asserted): no fork bomb can be contained here"
  fi
  start=$(date +%s%N)
  # A fork bomb that keeps trying (a shell's gives up at the first refused fork), at the
  # lowest priority so that the watcher keeps up; the marked sleep is how the watcher
  # finds the sandbox's PID namespace.
  "$CORDON" run --limit-pids 50 --timeout 5 --status-json "$CT/st.json" -- \
    sh -c 'sleep "100.$1" & exec nice -n 19 "$2" -c "$3"' sh "$m" "$PY" "$BOMB" \
    </dev/null >"$CT/out" 2>"$CT/err" &
  cpid=$!
  track_pid "$cpid" "$m"
  most=$("$PY" -c "$PIDNS_MAX" "$m" "$cpid")
  wait "$cpid" || rc=$?
  end=$(date +%s%N)
  check_sanitizer "$CT/err" "cordon run (fork bomb)"
  local ms=$(((end - start) / 1000000))
  [ "$rc" = 124 ] || die "fork bomb under --limit-pids 50 --timeout 5 ($mech): expected exit 124, got $rc ($(head -c 300 "$CT/err" | _one_line))"
  [ "$most" != none ] || die "the watcher never saw the sandbox's marked sleep"
  [ "$ms" -lt 15000 ] || die "the fork bomb run took ${ms}ms"
  # 50 for the command and its descendants, plus cordon's PID 1 (seen only by root)
  [ "$most" -le 51 ] || die "fork bomb ($mech): $most processes at once in the sandbox, above --limit-pids 50"
  [ "$most" -ge 30 ] || die "fork bomb ($mech): only $most processes at once: the bomb never reached the limit (test broken?)"
  wait_no_sleepers "$m" 3 || die "processes of the fork bomb's sandbox left after cordon returned"
  # (under rlimits PID 1 sees the process count at the limit: issue 9, item 10)
  assert_eq "$(json_limits "$CT/st.json")" "$mech pids" "status-json limits after a fork bomb"
  [ "$mech" != rlimit ] || assert_contains "$(cat "$CT/err")" "enforced with rlimits here" "the rlimit note"
}

t_pids_positive() {
  if pids_refused --limit-pids 50; then
    expect_pids_refused --limit-pids 50 -- sh -c 'echo started'
    assert_not_contains "$OUT" "started" "the refused run started its command"
    skip_case "as root without a cgroup ($(mechanism --limit-pids 50)) --limit-pids is refused (exit 125, asserted): nothing runs under a process limit here"
  fi
  # 20 processes at once under a limit of 50: all run
  expect_output "20" run --limit-pids 50 -- sh -c 'n=0; for i in $(seq 20); do sleep 0.5 & n=$((n+1)); done; wait; echo $n'
}

HOG='
import sys
x = []
for i in range(int(sys.argv[1])):
    x.append(bytearray(1 << 20))
print("allocated %s MiB" % sys.argv[1])
'

t_memory_hog() {
  local mech
  mech=$(mechanism --limit-memory 64M)
  crun run --limit-memory 64M --status-json "$CT/st.json" -- "$PY" -c "$HOG" 1024
  assert_not_contains "$OUT" "allocated" "a 1 GiB hog under --limit-memory 64M ($mech)"
  case $mech in
    cgroup*)
      # the kernel's OOM killer, inside the run's cgroup
      [ "$RC" = 137 ] || die "memory hog ($mech): expected exit 137 (SIGKILL by the OOM killer), got $(last_run)"
      assert_contains "$ERR" "--limit-memory" "cordon says which limit was reached"
      assert_eq "$(json_limits "$CT/st.json")" "$mech memory" "status-json limits after a memory hog" ;;
    *)
      # RLIMIT_AS: the allocation fails (Python: MemoryError, exit 1)
      [ "$RC" = 1 ] || die "memory hog ($mech): expected exit 1 (MemoryError), got $(last_run)"
      assert_contains "$ERR" "MemoryError" "the hog's own error" ;;
  esac
}

t_memory_positive() {
  expect_output "allocated 64 MiB" run --limit-memory 256M -- "$PY" -c "$HOG" 64
}

t_cpu_busy_loop() {
  local mech
  mech=$(mechanism --limit-cpu 1)
  crun run --limit-cpu 1 --status-json "$CT/st.json" -- sh -c 'while :; do :; done'
  [ "$RC" = 152 ] || die "busy loop under --limit-cpu 1 ($mech): expected exit 152 (128+SIGXCPU), got $(last_run)"
  [ "$ELAPSED_MS" -lt 8000 ] || die "busy loop under --limit-cpu 1 ($mech) ran ${ELAPSED_MS}ms"
  [ "$ELAPSED_MS" -ge 900 ] || die "busy loop under --limit-cpu 1 ($mech) was stopped after only ${ELAPSED_MS}ms"
  assert_contains "$ERR" "--limit-cpu" "cordon says which limit was reached"
  assert_eq "$(json_limits "$CT/st.json")" "$mech cpu" "status-json limits after a busy loop"
}

t_cpu_total_not_per_process() {
  local mech
  mech=$(mechanism --limit-cpu 1)
  case $mech in
    cgroup*) ;;
    *) skip_case "the CPU limit is per process here ($mech: RLIMIT_CPU); only a cgroup counts the total" ;;
  esac
  # four processes of 0.6 CPU seconds each, one after the other: 2.4 s in all
  crun run --limit-cpu 1 -- sh -c 'for i in 1 2 3 4; do "$1" -c "
import time
t = time.process_time()
while time.process_time() - t < 0.6:
    pass"; done; echo survived' sh "$PY"
  [ "$RC" = 152 ] || die "processes summing above --limit-cpu 1 ($mech): expected exit 152, got $(last_run)"
  assert_not_contains "$OUT" "survived"
}

t_cpu_positive() {
  expect_output "done" run --limit-cpu 5 -- sh -c 'i=0; while [ $i -lt 1000 ]; do i=$((i+1)); done; echo done'
}

# ------------------------------------------------------------------------------------
# reporting, containment and clean-up

t_status_json_limits() {
  expect_ok run --status-json "$CT/none.json" -- true
  assert_eq "$(json_limits "$CT/none.json")" "null" "status-json limits without a limit"
  local mech
  mech=$(mechanism --limit-pids 100 --limit-memory 1G --limit-cpu 30)
  if pids_refused --limit-pids 100 --limit-memory 1G --limit-cpu 30; then
    # refused before anything started: no limits were at work
    expect_pids_refused --limit-pids 100 --limit-memory 1G --limit-cpu 30 --status-json "$CT/refused.json" -- true
    assert_eq "$(json_limits "$CT/refused.json")" "null" "status-json limits of a refused run"
    assert_eq "$(json_get "$CT/refused.json" stage)" '"limits"' "status-json stage of a refused run"
    expect_ok run --limit-memory 1G --limit-cpu 30 --status-json "$CT/st.json" -- true
  else
    expect_ok run --limit-pids 100 --limit-memory 1G --limit-cpu 30 --status-json "$CT/st.json" -- true
  fi
  assert_eq "$(json_limits "$CT/st.json")" "$mech -" "status-json limits of a run within its limits"
}

t_explain_limits() {
  crun explain --limit-pids 50 --limit-memory 64M --limit-cpu 2
  [ "$RC" = 0 ] || die "explain: $(last_run)"
  assert_contains "$OUT" "pids     50 " "explain: pids"
  assert_contains "$OUT" "memory   64 MiB" "explain: memory"
  assert_contains "$OUT" "cpu      2 s" "explain: cpu"
  case $(mechanism --limit-pids 50) in
    cgroup2 | cgroup1 | rlimit) ;;
    *) die "explain names no mechanism: $(printf '%s' "$OUT" | grep -A1 '^limits')" ;;
  esac
  # explain warns of the refusal exactly where cordon run refuses
  if pids_refused --limit-pids 50; then
    assert_contains "$OUT" "(as root, --limit-pids fails" "explain: the refusal of --limit-pids as root"
  else
    assert_not_contains "$OUT" "--limit-pids fails" "explain: no refusal where a process limit holds"
  fi
  # every cgroup file system read-only (tests/ro-cgroup.sh, which says in
  # CORDON_TEST_RO_CGROUP what the mechanism was before): no cgroup can be used, and where
  # one could before, explain and check say it is the read-only mount
  if [ -n "${CORDON_TEST_RO_CGROUP:-}" ]; then
    assert_eq "$(mechanism --limit-pids 50 --limit-memory 64M --limit-cpu 2)" "rlimit" \
      "explain's mechanism with every cgroup file system read-only"
    crun check --json
    local check
    check=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; c = json.load(sys.stdin)["checks"]["cgroup_delegation"]; print(c["mechanism"], c["detail"], "FIX:", c["fix"])')
    assert_contains "$check" "rlimit " "cordon check's mechanism with every cgroup file system read-only"
    case $CORDON_TEST_RO_CGROUP in
      cgroup*)
        crun explain --limit-pids 50 --limit-memory 64M --limit-cpu 2
        assert_contains "$(printf '%s' "$OUT" | grep -m1 '^limits (')" "read-only" \
          "explain says why the $CORDON_TEST_RO_CGROUP cgroup is out of use"
        assert_contains "$check" "read-only" "cordon check says why the $CORDON_TEST_RO_CGROUP cgroup is out of use"
        # and its advice is for a read-only cgroup file system, not systemd-run's delegation
        assert_contains "${check#*FIX:}" "mounted read-only (a container's default)" "cordon check's fix for a read-only cgroup"
        assert_not_contains "${check#*FIX:}" "systemd-run" "cordon check's fix for a read-only cgroup" ;;
    esac
  fi
  crun explain
  assert_contains "$OUT" "limits" "explain without limits"
}

t_limits_out_of_reach() {
  local mech
  mech=$(mechanism --limit-pids 50 --limit-memory 256M)
  case $mech in
    cgroup*) ;;
    *) skip_case "no cgroup here ($mech): nothing to reach" ;;
  esac
  # The sandbox's cgroup namespace is rooted at the run's own cgroup: it sees "/" only,
  # not the directory holding its limits.
  crun run --limit-pids 50 --limit-memory 256M -- cat /proc/self/cgroup
  [ "$RC" = 0 ] || die "$(last_run)"
  local bad
  bad=$(printf '%s\n' "$OUT" | grep -v ':/$' || true)
  [ -z "$bad" ] || die "inside, /proc/self/cgroup shows more than the run's own cgroup: $(printf '%s' "$bad" | _one_line)"
}

# no_run_cgroups PID DIR...: no cgroup of cordon process PID is left in the DIRs.
no_run_cgroups() {
  local pid=$1 d left
  shift
  for d in "$@"; do
    left=$(ls -d "$d/cordon-$pid-"* 2>/dev/null || true)
    [ -z "$left" ] || return 1
  done
}

t_cgroups_removed() {
  local mech dirs cpid i
  mech=$(mechanism --limit-pids 50 --limit-cpu 30)
  case $mech in
    cgroup*) ;;
    *) skip_case "no cgroup here ($mech)" ;;
  esac
  mapfile -t dirs < <(cgroup_dirs --limit-pids 50 --limit-cpu 30)
  [ ${#dirs[@]} -gt 0 ] || die "explain names no cgroup directory"
  # after a normal run
  "$CORDON" run --limit-pids 50 --limit-cpu 30 -- true </dev/null >/dev/null 2>"$CT/err" &
  cpid=$!
  wait "$cpid" || die "cordon run with limits failed: $(head -c 300 "$CT/err")"
  for ((i = 0; i < 60; i++)); do no_run_cgroups "$cpid" "${dirs[@]}" && break; sleep 0.05; done
  no_run_cgroups "$cpid" "${dirs[@]}" || die "cgroup(s) of run $cpid left after it: $(ls -d "${dirs[0]}/cordon-$cpid-"* 2>/dev/null | _one_line)"
  # after kill -9 of cordon mid-run: the janitor removes them
  local m
  m=$(new_mark)
  "$CORDON" run --limit-pids 50 --limit-cpu 30 -- sleep "100.$m" </dev/null >/dev/null 2>"$CT/err" &
  cpid=$!
  track_pid "$cpid" "$m"
  wait_for_sleepers "$m" 10 >/dev/null || die "the sandboxed sleep never appeared: $(head -c 300 "$CT/err")"
  ls -d "${dirs[0]}/cordon-$cpid-"* >/dev/null 2>&1 || die "no cgroup cordon-$cpid-* in ${dirs[0]} during the run"
  kill -9 "$cpid"
  wait "$cpid" 2>/dev/null || true
  wait_no_sleepers "$m" 3 || die "kill -9 of cordon: the sandbox outlived it"
  for ((i = 0; i < 60; i++)); do no_run_cgroups "$cpid" "${dirs[@]}" && break; sleep 0.05; done
  no_run_cgroups "$cpid" "${dirs[@]}" || die "kill -9 of cordon: its cgroup(s) still there 3s later"
}

t_root_pids_without_cgroup() {
  [ "$MY_UID" -eq 0 ] || skip_case "root only: RLIMIT_NPROC binds every other uid"
  command -v unshare >/dev/null && command -v findmnt >/dev/null || skip_case "unshare or findmnt (util-linux) missing"
  # In a mount namespace of its own, every cgroup file system read-only: no cgroup can be
  # made, and the kernel never applies RLIMIT_NPROC to root, so --limit-pids must refuse
  # to run rather than run unlimited; the other limits still hold through rlimits.
  local script='
for m in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
  mount -o remount,bind,ro "$m" "$m" 2>/dev/null || mount -o bind,remount,ro "$m" "$m" || exit 99
done
"$1" run --limit-pids 50 -- true; echo "pids=$?"
"$1" run --limit-memory 256M --limit-cpu 5 -- true; echo "others=$?"'
  local out rc=0
  out=$(timeout 30 unshare -m --propagation private sh -c "$script" sh "$CORDON" 2>"$CT/err") || rc=$?
  [ "$rc" = 0 ] || skip_case "cannot make the cgroup file systems read-only in a mount namespace (status $rc)"
  check_sanitizer "$CT/err" "cordon run (no cgroup, as root)"
  assert_contains "$out" "pids=125" "--limit-pids as root without a cgroup"
  assert_contains "$(cat "$CT/err")" "RLIMIT_NPROC" "the message says why"
  assert_contains "$out" "others=0" "--limit-memory and --limit-cpu through rlimits"
}

run_case bad_values t_bad_values
run_case good_values t_good_values
run_case settings_keys t_settings_keys
run_case settings_bad t_settings_bad
run_case fork_bomb t_fork_bomb
run_case pids_positive t_pids_positive
run_case memory_hog t_memory_hog
run_case memory_positive t_memory_positive
run_case cpu_busy_loop t_cpu_busy_loop
run_case cpu_total_not_per_process t_cpu_total_not_per_process
run_case cpu_positive t_cpu_positive
run_case status_json_limits t_status_json_limits
run_case explain_limits t_explain_limits
run_case limits_out_of_reach t_limits_out_of_reach
run_case cgroups_removed t_cgroups_removed
run_case root_pids_without_cgroup t_root_pids_without_cgroup
finish
