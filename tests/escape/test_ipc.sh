#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Inter-process communication with the host: System V shared memory, message queues and
# semaphores (made on the host with ipcmk), a POSIX message queue, and /dev/shm. The
# sandbox has an IPC namespace and a /dev/shm of its own: the host's objects cannot be
# found by key, id or name. Positive controls: inside, objects with the very same keys
# and name can be created and used, and /dev/shm is writable; afterwards the host's
# objects are as they were.
. "$(dirname "$0")/lib.sh"
esc_build ipc

# ipcmk_key -M|-Q|-S ARG...: make a host object; sets IPC_ID and IPC_KEY.
ipcmk_key() {
  local kind=$1 table
  shift
  IPC_ID=$(ipcmk "$kind" "$@" -p 0600 | awk '{print $NF}')
  [ -n "$IPC_ID" ] || die "ipcmk $kind failed"
  case $kind in -M) table=-m ;; -Q) table=-q ;; -S) table=-s ;; esac
  echo "ipcrm $table $IPC_ID" >>"$CT/cleanup"
  IPC_KEY=$(ipcs "$table" | awk -v id="$IPC_ID" '$2 == id { print $1 }')
  [ -n "$IPC_KEY" ] || die "cannot find the key of the host's ipc object $IPC_ID"
}

cleanup_ipc() {
  [ -f "$CT/cleanup" ] && sh "$CT/cleanup" >/dev/null 2>&1
  "$BIN/ipc" mq-unlink "$MQ" 2>/dev/null
  rm -f "$CT/cleanup"
}

t_sysv_and_mqueue() {
  command -v ipcmk >/dev/null || skip_case "ipcmk (util-linux) not installed"
  MQ=cordon-escape-$$-$RANDOM
  trap cleanup_ipc EXIT
  ipcmk_key -M 4096
  local shmid=$IPC_ID shmkey=$IPC_KEY
  ipcmk_key -Q
  local msgkey=$IPC_KEY
  ipcmk_key -S 1
  local semkey=$IPC_KEY
  "$BIN/ipc" mq-create "$MQ" "host message" || die "cannot create the host's POSIX message queue"
  esc_ok -- ipc attack "$shmkey" "$shmid" "$msgkey" "$semkey" "$MQ"
  want_refused shmget_host_key ENOENT
  want_refused shmat_host_id EINVAL EIDRM EACCES
  want_refused msgget_host_key ENOENT
  want_refused semget_host_key ENOENT
  want_refused mq_open_host ENOENT
  local l
  for l in shmget_same_key shmat msgget_same_key msgsnd semget_same_key mq_same_name mq_roundtrip; do
    want_ok "control_$l"
  done
  # the host's objects are untouched: the segment is unattached, the queue still holds
  # its one message, and the keys still name the host's objects
  [ "$(ipcs -m | awk -v id="$shmid" '$2 == id { print $6 }')" = 0 ] || die "the host's shared memory segment was attached"
  host_run ipc mq-count "$MQ"
  assert_eq "$(detail mq_count)" 1 "messages in the host's POSIX queue"
  [ "$(ipcs -m | awk -v k="$shmkey" '$1 == k' | wc -l)" = 1 ] || die "the host now has another segment with key $shmkey"
}

t_dev_shm() {
  local name=cordon-escape-$$-$RANDOM
  echo "host shm secret" >"/dev/shm/$name" || skip_case "/dev/shm is not writable on the host"
  chmod 0644 "/dev/shm/$name"
  # shellcheck disable=SC2064 # expanded now: the local is gone when the trap runs
  trap "rm -f '/dev/shm/$name' '/dev/shm/$name.inside'" EXIT
  crun run -- sh -c '
    cat "/dev/shm/$1" 2>/dev/null && echo LEAK
    ls /dev/shm | grep -q . && echo "not empty: $(ls /dev/shm)"
    echo inside >"/dev/shm/$1.inside" && cat "/dev/shm/$1.inside"
    echo done' sh "$name"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" LEAK "the host's /dev/shm file was read inside"
  assert_not_contains "$OUT" "not empty" "the sandbox's /dev/shm shows host files"
  # positive control: /dev/shm works inside
  assert_contains "$OUT" "inside" "/dev/shm is not usable inside"
  assert_contains "$OUT" "done"
  assert_absent "/dev/shm/$name.inside" "a file written in the sandbox's /dev/shm appeared on the host"
  assert_file_content "/dev/shm/$name" "host shm secret"
}

run_case sysv_and_mqueue t_sysv_and_mqueue
run_case dev_shm t_dev_shm
finish
