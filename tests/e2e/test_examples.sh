#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The examples (examples/): the shell tool (commands from stdin, streamed output, a timeout,
# Ctrl-C stops the current command and not the tool) and the long-lived piped child (a line
# echo server driven over stdio), each in C (built next to $CORDON, on libcordon.so alone)
# and in Python (on the libcordon.so next to $CORDON).
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$CORDON")
LIB=$BUILD/libcordon.so
EX=$REPO_ROOT/examples

# tool_cmd KIND: set CMD to the shell tool's command line, or skip.
tool_cmd() {
  case $1 in
    c) [ -x "$BUILD/examples/shell_tool" ] || skip_case "$BUILD/examples/shell_tool is not built"
       CMD="$BUILD/examples/shell_tool" ;;
    py) python_ok; CMD="$PY $EX/shell_tool.py" ;;
  esac
}

python_ok() {
  [ -e "$LIB" ] || skip_case "$LIB not found"
  ! ldd "$LIB" 2>/dev/null | grep -q libasan || skip_case "a sanitizer build's libcordon.so cannot be loaded into python3"
  [ -r "$EX/shell_tool.py" ] || skip_case "$EX cannot be read by $WHO"
  export CORDON_LIBRARY=$LIB PYTHONPATH=$REPO_ROOT/python
}

t_shell_tool() {
  local kind=$1
  tool_cmd "$kind"
  echo "in the workspace" >"$WS/f"
  printf 'cat f; echo err >&2\nexit 3\nsleep 30\necho after\ncat %s\n' "$OUTSIDE/secret" |
    timeout 60 $CMD --timeout 1 >"$CT/out" 2>&1 || die "the shell tool failed: $(head -c 300 "$CT/out")"
  local out
  out=$(cat "$CT/out")
  assert_contains "$out" "in the workspace"$'\n'"err"$'\n'"[exit 0]"
  assert_contains "$out" "[exit 3]"
  assert_contains "$out" "[timed out after 1 s]"
  assert_contains "$out" "after"$'\n'"[exit 0]"
  assert_not_contains "$out" "host secret" "a command of the shell tool read a file outside its sandbox"
}

# Ctrl-C (SIGINT to the tool) stops the command that runs, and the tool goes on.
t_shell_tool_ctrl_c() {
  local kind=$1 pid mark
  tool_cmd "$kind"
  mark=$(new_mark)
  mkfifo "$CT/in"
  $CMD --timeout 60 <"$CT/in" >"$CT/out" 2>&1 &
  pid=$!
  exec 3>"$CT/in"
  echo "echo started; sleep 100.$mark" >&3
  local i=0
  while ! grep -q started "$CT/out" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
  [ -n "$(find_sleepers "$mark")" ] || die "the command did not start: $(head -c 300 "$CT/out")"
  local t0=$(date +%s%N)
  kill -INT $pid
  echo "echo after" >&3
  exec 3>&-
  timeout 20 tail --pid=$pid -f /dev/null || { kill -9 $pid; die "the tool did not end after its stdin did"; }
  local ms=$((($(date +%s%N) - t0) / 1000000))
  wait $pid || die "the tool exited non-zero: $(head -c 300 "$CT/out")"
  local out
  out=$(cat "$CT/out")
  assert_contains "$out" "[stopped]"
  assert_contains "$out" "after"$'\n'"[exit 0]"
  [ -z "$(find_sleepers "$mark")" ] || die "the stopped command's process is still there"
  [ "$ms" -lt 10000 ] || die "stopping took ${ms} ms"
}

t_echo_child() {
  local kind=$1 out
  case $kind in
    c) [ -x "$BUILD/examples/echo_child" ] || skip_case "$BUILD/examples/echo_child is not built"
       out=$(timeout 30 "$BUILD/examples/echo_child" one "two words" three) || die "echo_child failed: $out" ;;
    py) python_ok
        out=$(timeout 30 "$PY" "$EX/echo_child.py" one "two words" three) || die "echo_child.py failed: $out" ;;
  esac
  assert_contains "$out" "one -> echo: one"
  assert_contains "$out" "two words -> echo: two words"
  assert_contains "$out" "three -> echo: three"
  assert_contains "$out" "server exited 0"
}

require_cordon
for kind in c py; do
  run_case "shell_tool_$kind" t_shell_tool "$kind"
  run_case "shell_tool_ctrl_c_$kind" t_shell_tool_ctrl_c "$kind"
  run_case "echo_child_$kind" t_echo_child "$kind"
done
finish
