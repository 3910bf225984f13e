#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The differential test: the same permission profiles and commands through the REAL
# Codex helper (Codex 0.169's Linux binary through a link named codex-linux-sandbox,
# installed by `CORDON_CODEX=1 ./bootstrap.sh`, as CI does) and through cordon as
# codex-linux-sandbox, outcomes compared path by path: readable (the content shows),
# writable (a file can be created in a directory, a file opened for writing, a missing
# path made), visible; and what is reachable, and the exit status.
#
# Every difference is either one this file lists in DELIBERATE (with the reason; doc/codex.md
# lists the same), or a failure. Without the real helper every case is skipped, loudly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/codex_lib.sh"

# ---- the real helper -------------------------------------------------------------------

find_real_helper() {
  local c
  if [ -n "${CORDON_CODEX_HELPER:-}" ]; then
    [ -x "$CORDON_CODEX_HELPER" ] && { printf '%s\n' "$CORDON_CODEX_HELPER"; return 0; }
    return 1
  fi
  for c in "${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex; do
    [ -x "$c" ] && { printf '%s\n' "$c"; return 0; }
  done
  return 1
}
REAL=$(find_real_helper || true)
REAL_WHY="the real Codex helper is not installed (run CORDON_CODEX=1 ./bootstrap.sh, as CI does, or set CORDON_CODEX_HELPER to Codex 0.169's Linux binary)"
if [ -n "$REAL" ]; then
  mkdir -p "$T/ref"
  ln -sf "$REAL" "$T/ref/codex-linux-sandbox"
  REAL_LINK=$T/ref/codex-linux-sandbox
  # the helper re-executes itself inside its sandbox: its own files must stay readable
  REAL_DIR=$(cd "$(dirname "$REAL")/../.." && pwd)
  if ! "$REAL_LINK" --help >/dev/null 2>&1; then
    REAL_WHY="the real helper at $REAL does not run here (as uid $(id -u))"
    REAL=
  fi
fi

# ---- the fixture -----------------------------------------------------------------------
# Every file holds "marker"; every directory holds a file m that does. Readable means, for
# a file, that its content shows, for a directory of the fixture, that it lists m, for any
# other directory, that it lists something (cordon hides with an empty directory or file,
# Codex with one that cannot be read).

mkfix() {
  P=$CT/proj
  EXTRA=$CT/extra
  TMPD=$CT/tmpd
  mkdir -p "$P/src" "$P/a/b" "$P/deep/x" "$P/.codex" "$P/.agents" "$P/sub" "$EXTRA" "$TMPD"
  local d
  mkdir -p "$HOME/.ssh"
  for d in "$P" "$P/src" "$P/a" "$P/a/b" "$P/deep" "$P/deep/x" "$P/.codex" "$P/.agents" "$P/sub" "$EXTRA" \
    "$TMPD" "$OUTSIDE" "$HOME" "$HOME/.ssh"; do
    echo marker >"$d/m"
  done
  local f
  for f in src/f a/secret a/b/keep .env src/.env deep/x/.env .codex/config.toml; do echo marker >"$P/$f"; done
  echo marker >"$OUTSIDE/secret"
  if command -v git >/dev/null; then
    git -C "$P" init -q
    echo marker >"$P/.git/m"
  fi
  cat >"$CT/probe.sh" <<'EOF'
#!/bin/sh
# probe.sh PATH...: "PATH r=0|1 w=0|1 e=0|1"
for p in "$@"; do
  e=0; { [ -e "$p" ] || [ -L "$p" ]; } && e=1
  r=0
  if [ -d "$p" ]; then
    case $p in
      "$PROBE_FIXTURE"/*) ls "$p" 2>/dev/null | grep -qx m && r=1 ;;
      *) [ -n "$(ls -A "$p" 2>/dev/null)" ] && r=1 ;;
    esac
  elif [ -e "$p" ]; then [ "$(head -c 6 "$p" 2>/dev/null)" = marker ] && r=1; fi
  w=0
  if [ -d "$p" ]; then
    # a name of its own (mktemp): $$ is the same small number in every sandbox's PID
    # namespace, and this test runs as root and as uid 65534 at once in the host's /tmp
    if t=$(mktemp "$p/.diffprobe.XXXXXX" 2>/dev/null); then w=1; rm -f "$t"; fi
  elif [ -e "$p" ]; then ( : >>"$p" ) 2>/dev/null && w=1
  elif mkdir "$p" 2>/dev/null; then w=1; rmdir "$p"; fi
  echo "$p r=$r w=$w e=$e"
done
EOF
  chmod 0755 "$CT/probe.sh"
  chmod -R a+rX "$CT"
}

# The paths every case probes.
probe_paths() {
  printf '%s\n' / /etc/passwd /tmp /run "$TMPD" "$HOME" "$HOME/.ssh" "$OUTSIDE" "$OUTSIDE/secret" "$EXTRA" \
    "$P" "$P/src" "$P/src/f" "$P/a" "$P/a/secret" "$P/a/b" "$P/a/b/keep" \
    "$P/.git" "$P/.git/config" "$P/.git/HEAD" "$P/.codex" "$P/.codex/config.toml" "$P/.agents" \
    "$P/.aws" "$P/.vscode" "$P/.env" "$P/src/.env" "$P/deep/x/.env" "$P/nope" "$P/gone" "$P/sub/.git"
}

# The entries both helpers get besides the case's own: the probe (and the real helper's
# own files, which it re-executes) readable, harmless where the root is readable anyway.
base_entries() { printf '%s,%s,%s' "$(pe "$CT/probe.sh" read)" "$(pe "$REAL_DIR" read)" "$(pe "$T/ref" read)"; }

# ---- the deliberate differences ---------------------------------------------------------
# CASE|PATH (with $P, $HOME ... unexpanded)|cordon's line suffix|Codex's line suffix|why

DELIBERATE='
*|$P/.aws|r=0 w=0 e=0|r=0 w=0 e=1|a missing protected name stays absent (Codex mounts an empty read-only directory there); both keep it from being created
*|$P/.vscode|r=0 w=0 e=0|r=0 w=1 e=0|cordon also protects .vscode .idea .claude .mcp.json .gitmodules .cordon at the top of every writable root
*|$P/gone|r=0 w=0 e=0|r=0 w=0 e=1|a missing denied path stays absent and uncreatable (Codex mounts an empty directory or /dev/null there)
*|$P/nope|r=0 w=0 e=0|r=0 w=0 e=1|a missing read-only path stays absent and uncreatable (Codex mounts an empty directory there)
*|$P/sub/.git|r=0 w=0 e=0|r=0 w=1 e=0|no new git repository in a host directory (git init in $TMPDIR works): a host git would run its hooks and configuration
*|/run|r=0 w=0 e=1|r=1 w=0 e=1|the host'"'"'s service sockets (/run, /var/run: docker, D-Bus, agents) are hidden under a readable root unless an entry shows them
*|$HOME/.ssh|r=0 w=0 e=1|r=1 w=0 e=1|the credential stores of the home (~/.ssh ~/.aws ~/.config/gh ...) are hidden wherever the home is visible, unless an entry names them
workspace_write|$HOME/.ssh|r=0 w=0 e=1|r=1 w=1 e=1|as above (the test home lies under the writable /tmp)
unrestricted|$HOME/.ssh|r=0 w=0 e=1|r=1 w=1 e=1|as above, whatever the profile
unrestricted|/|r=1 w=0 e=1|r=1 w=1 e=1|the root directory is cordon'"'"'s own, read-only: no new top-level entries (every top-level directory is the host'"'"'s, writable)
unrestricted|$P/.git/config|r=0 w=0 e=1|r=0 w=1 e=1|the configuration and hooks of every git directory stay as they were, whatever the profile
minimal|/|r=1 w=0 e=1|r=1 w=1 e=1|directories that only hold mount points are read-only (Codex root is a writable tmpfs whose writes vanish)
minimal|/run|r=0 w=0 e=0|r=0 w=1 e=0|missing mount points cannot be created: the command cannot make directories at the top of the view (Codex: its tmpfs root takes them)
minimal|$TMPD|r=0 w=0 e=0|r=0 w=1 e=0|directories that only hold mount points are read-only: nothing can be made beside the project root (Codex: its tmpfs takes it, and it vanishes)
minimal|$HOME|r=0 w=0 e=0|r=0 w=1 e=0|as above
minimal|$OUTSIDE|r=0 w=0 e=0|r=0 w=1 e=0|as above
minimal|$EXTRA|r=0 w=0 e=0|r=0 w=1 e=0|as above
'

# deliberate CASE PATHLINE_COR PATHLINE_REF: print the reason when the pair is listed.
deliberate() {
  local c=$1 cor=$2 ref=$3 line lc lp lcor lref why path
  path=${cor%% r=*}
  while IFS='|' read -r lc lp lcor lref why; do
    [ -n "$lc" ] || continue
    [ "$lc" = '*' ] || [ "$lc" = "$c" ] || continue
    lp=$(eval "printf '%s' \"$lp\"")
    [ "$lp" = "$path" ] || continue
    [ "$cor" = "$path $lcor" ] && [ "$ref" = "$path $lref" ] && { printf '%s\n' "$why"; return 0; }
  done <<<"$DELIBERATE"
  return 1
}

# ---- running one case through both -----------------------------------------------------

# diff_case NAME PROFILE [HELPER ARG...]: run the probe through both, compare.
diff_case() {
  local name=$1 prof=$2
  shift 2
  [ -n "$REAL" ] || skip_case "$REAL_WHY"
  local paths
  mapfile -t paths < <(probe_paths)
  cd "$P" # the command runs in the helper's own working directory
  export PROBE_FIXTURE=$CT
  "$REAL_LINK" --sandbox-policy-cwd "$P" --command-cwd "$P" --permission-profile "$prof" "$@" -- \
    "$CT/probe.sh" "${paths[@]}" >"$CT/ref.out" 2>"$CT/ref.err" || die "the real helper failed ($?): $(head -c 300 "$CT/ref.err")"
  "$CODEX_CORDON" --sandbox-policy-cwd "$P" --command-cwd "$P" --permission-profile "$prof" "$@" -- \
    "$CT/probe.sh" "${paths[@]}" >"$CT/cor.out" 2>"$CT/cor.err" || die "cordon failed ($?): $(head -c 300 "$CT/cor.err")"
  check_sanitizer "$CT/cor.err" "cordon"
  [ "$(wc -l <"$CT/ref.out")" = "${#paths[@]}" ] || die "the real helper printed $(wc -l <"$CT/ref.out") lines for ${#paths[@]} paths"
  local i bad="" noted=0 cor ref why
  for ((i = 1; i <= ${#paths[@]}; i++)); do
    cor=$(sed -n "${i}p" "$CT/cor.out")
    ref=$(sed -n "${i}p" "$CT/ref.out")
    [ "$cor" = "$ref" ] && continue
    if why=$(deliberate "$name" "$cor" "$ref"); then
      noted=$((noted + 1))
      echo "# $name: $cor (codex: ${ref#* }): $why" >>"$T/.notes"
    else
      bad+="${bad:+; }cordon '$cor', codex '${ref#* }'"
    fi
  done
  [ -z "$bad" ] || die "outcomes differ: $bad"
}

# reach_case NAME PROFILE: can the command reach a host loopback server? Both must agree.
reach_case() {
  local name=$1 prof=$2 a b
  [ -n "$REAL" ] || skip_case "$REAL_WHY"
  start_tcp_server 30
  local cmd=("$PY" -c "$TCP_CLIENT" "$SERVER_PORT")
  a=$("$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$prof" -- "${cmd[@]}" 2>&1 | tail -n 1)
  b=$("$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$prof" -- "${cmd[@]}" 2>>"$CT/cor.err" | tail -n 1)
  [ "${a%% *}" = pong ] && a=reached || a="not reached"
  [ "${b%% *}" = pong ] && b=reached || b="not reached"
  assert_eq "$b" "$a" "$name: the host's loopback through cordon, as through the real helper"
  printf '%s' "$a"
}

# status_case PROFILE CMD...: the same exit status through both.
status_case() {
  local prof=$1 a=0 b=0
  shift
  "$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$prof" -- "$@" >/dev/null 2>&1 || a=$?
  "$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$prof" -- "$@" >/dev/null 2>&1 || b=$?
  assert_eq "$b" "$a" "exit status of $* through cordon, as through the real helper"
}

RR=$(sp root read)
PW=$(sp project_roots write)

t_read_only() { mkfix; diff_case read_only "$(profile "$RR,$(base_entries)")"; }
t_workspace_write() {
  mkfix
  TMPDIR=$TMPD diff_case workspace_write "$(profile "$RR,$PW,$(sp slash_tmp write),$(sp tmpdir write),$(base_entries)")"
}
t_carveouts() { mkfix; diff_case carveouts "$(profile "$RR,$(pe "$P" write),$(pe "$P/a" deny),$(pe "$P/a/b" write),$(base_entries)")"; }
t_deny_file_and_precedence() {
  mkfix
  diff_case deny_file "$(profile "$RR,$PW,$(pe "$P/src/f" deny),$(pe "$P/src" read),$(pe "$P/src" write),$(pe "$P/a" write),$(pe "$P/a" none),$(base_entries)")"
}
t_globs() { mkfix; diff_case globs "$(profile "$RR,$PW,$(ge '**/*.env' deny),$(base_entries)")"; }
t_glob_depth() {
  mkfix
  diff_case glob_depth "$(profile "$RR,$PW,$(ge "$CT/proj/**/*.env" deny),$(base_entries)" restricted '"glob_scan_max_depth":2')"
}
t_minimal() { mkfix; diff_case minimal "$(profile "$(sp minimal read),$PW,$(base_entries)")"; }
t_subpath() { mkfix; diff_case subpath "$(profile "$RR,$(sp project_roots write ',"subpath":"src"'),$(base_entries)")"; }
t_extra_root() { mkfix; diff_case extra_root "$(profile "$RR,$(pe "$EXTRA" write),$(base_entries)")"; }
t_missing_paths() {
  mkfix
  diff_case missing_paths "$(profile "$RR,$PW,$(pe "$P/nope" read),$(pe "$P/gone" deny),$(pe "$P/skipped" read ',"missing_path_behavior":"skip"'),$(base_entries)")"
}
t_unrestricted() {
  mkfix
  diff_case unrestricted '{"type":"managed","file_system":{"type":"unrestricted"},"network":"restricted"}'
}
t_network() {
  mkfix
  local r
  r=$(reach_case restricted "$(profile "$RR")")
  assert_eq "$r" "not reached" "restricted network"
  r=$(reach_case enabled "$(profile "$RR" enabled)")
  assert_eq "$r" reached "enabled network (positive control)"
}
t_proxy_mode() {
  [ -n "$REAL" ] || skip_case "$REAL_WHY"
  mkfix
  # a loopback HTTP proxy that answers itself, for both helpers' requests
  local portfile=$CT/proxy.port i
  "$PY" -c '
import http.server, socketserver, sys, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"proxied " + self.path.encode())
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".t", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".t", sys.argv[1])
s.timeout = 30
for _ in range(4): s.handle_request()' "$portfile" &
  track_pid $! "$portfile"
  for ((i = 0; i < 100; i++)); do [ -s "$portfile" ] && break; sleep 0.05; done
  local port a b fetch='import urllib.request
print(urllib.request.urlopen("http://example.invalid/x", timeout=5).read().decode())'
  port=$(cat "$portfile")
  cd "$P"
  a=$(http_proxy=http://127.0.0.1:$port "$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR")" \
    --managed-network '{"loopbackPorts":[]}' -- "$PY" -c "$fetch" 2>/dev/null)
  b=$(http_proxy=http://127.0.0.1:$port "$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR")" \
    --managed-network '{"loopbackPorts":[]}' -- "$PY" -c "$fetch" 2>>"$CT/cor.err")
  check_sanitizer "$CT/cor.err" cordon
  assert_eq "$a" "proxied http://example.invalid/x" "positive control: the real helper's proxy mode reaches the loopback proxy"
  assert_eq "$b" "$a" "proxy mode through cordon, as through the real helper"
  # the helper's checks: no usable proxy variable, a port outside loopbackPorts: both refuse
  a=0 b=0
  env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u ALL_PROXY -u all_proxy \
    "$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR")" --managed-network '{}' -- true >/dev/null 2>&1 || a=$?
  env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u ALL_PROXY -u all_proxy \
    "$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR")" --managed-network '{}' -- true >/dev/null 2>&1 || b=$?
  [ "$a" != 0 ] && [ "$b" = 1 ] || die "proxy mode without proxy variables: cordon $b, codex $a (cordon 1 where the helper panics)"
  a=0 b=0
  http_proxy=http://127.0.0.1:$port "$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR")" \
    --managed-network '{"loopbackPorts":[1]}' -- true >/dev/null 2>&1 || a=$?
  http_proxy=http://127.0.0.1:$port "$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR")" \
    --managed-network '{"loopbackPorts":[1]}' -- true >/dev/null 2>&1 || b=$?
  [ "$a" != 0 ] && [ "$b" = 1 ] || die "a proxy port outside loopbackPorts: cordon $b, codex $a"
}

t_parent_repo() {
  command -v git >/dev/null || skip_case "git not installed"
  [ -n "$REAL" ] || skip_case "$REAL_WHY"
  mkfix
  local a b
  a=$(cd "$P/sub" && "$REAL_LINK" --sandbox-policy-cwd "$P/sub" --permission-profile "$(profile "$RR,$PW")" -- git rev-parse --show-toplevel 2>&1)
  b=$(cd "$P/sub" && "$CODEX_CORDON" --sandbox-policy-cwd "$P/sub" --permission-profile "$(profile "$RR,$PW")" -- git rev-parse --show-toplevel 2>>"$CT/cor.err")
  check_sanitizer "$CT/cor.err" cordon
  assert_eq "$b" "$a" "git's repository from a project root without .git"
  assert_eq "$b" "$P" "the parent repository"
}
t_inherit_pid_namespace() {
  [ -n "$REAL" ] || skip_case "$REAL_WHY"
  mkfix
  local h
  h=$(new_mark)
  sleep "300.$h" &
  local host_pid=$! prof a b
  prof=$(profile "$RR,$PW")
  local probe='[ "$$" -gt 2 ] && echo host-pid; [ -d "/proc/$1" ] && echo sees-caller-process
    (echo x >/proc/self/comm) 2>/dev/null || echo proc-read-only'
  cd "$P"
  a=$("$REAL_LINK" --sandbox-policy-cwd "$P" --inherit-pid-namespace --permission-profile "$prof" -- sh -c "$probe" sh "$host_pid" 2>&1)
  b=$("$CODEX_CORDON" --sandbox-policy-cwd "$P" --inherit-pid-namespace --permission-profile "$prof" -- sh -c "$probe" sh "$host_pid" 2>>"$CT/cor.err")
  assert_eq "$b" "$a" "--inherit-pid-namespace through cordon, as through the real helper"
  # deliberate: signals to the caller's processes (Landlock's signal scope, Linux 6.12)
  a=$("$REAL_LINK" --sandbox-policy-cwd "$P" --inherit-pid-namespace --permission-profile "$prof" -- sh -c 'kill -0 "$1" 2>/dev/null && echo signalled || echo refused' sh "$host_pid" 2>&1)
  b=$("$CODEX_CORDON" --sandbox-policy-cwd "$P" --inherit-pid-namespace --permission-profile "$prof" -- sh -c 'kill -0 "$1" 2>/dev/null && echo signalled || echo refused' sh "$host_pid" 2>>"$CT/cor.err")
  check_sanitizer "$CT/cor.err" cordon
  kill "$host_pid" 2>/dev/null || true
  [ "$a" = signalled ] || die "positive control: the real helper could not signal the caller's process ($a)"
  [ "$b" = "$a" ] || echo "# inherit_pid_namespace: signalling a caller's process: cordon $b, codex $a: Landlock scopes signals to the sandbox where the kernel has it (ABI 6, Linux 6.12)" >>"$T/.notes"
}

t_exit_statuses() {
  [ -n "$REAL" ] || skip_case "$REAL_WHY"
  mkfix
  status_case "$(profile "$RR,$PW")" sh -c 'exit 7'
  status_case "$(profile "$RR,$PW")" sh -c 'kill -TERM $$'
  status_case "$(profile "$RR,$PW")" true
  # parser rejections: 2 through both
  local bad a=0 b=0
  for bad in '{' '{"type":"bogus"}' "$(profile "$(sp nowhere read)")" "$(profile "$(pe rel read)")"; do
    a=0 b=0
    "$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$bad" -- true >/dev/null 2>&1 || a=$?
    "$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$bad" -- true >/dev/null 2>&1 || b=$?
    assert_eq "$b/$a" "2/2" "exit status for the profile $bad (cordon/codex)"
  done
  a=0 b=0
  "$REAL_LINK" --sandbox-policy-cwd "$P" --bogus-flag -- true >/dev/null 2>&1 || a=$?
  "$CODEX_CORDON" --sandbox-policy-cwd "$P" --bogus-flag -- true >/dev/null 2>&1 || b=$?
  assert_eq "$b/$a" "2/2" "exit status for an unknown flag (cordon/codex)"
  # a glob without a static prefix: 1 through both
  a=0 b=0
  "$REAL_LINK" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR,$(ge '/**/*.env' deny)")" -- true >/dev/null 2>&1 || a=$?
  "$CODEX_CORDON" --sandbox-policy-cwd "$P" --permission-profile "$(profile "$RR,$(ge '/**/*.env' deny)")" -- true >/dev/null 2>&1 || b=$?
  assert_eq "$b/$a" "1/1" "exit status for a glob without a static prefix (cordon/codex)"
}

run_case read_only t_read_only
run_case workspace_write t_workspace_write
run_case carveouts t_carveouts
run_case deny_file_and_precedence t_deny_file_and_precedence
run_case globs t_globs
run_case glob_depth t_glob_depth
run_case minimal t_minimal
run_case subpath t_subpath
run_case extra_root t_extra_root
run_case missing_paths t_missing_paths
run_case unrestricted t_unrestricted
run_case network t_network
run_case proxy_mode t_proxy_mode
run_case parent_repo t_parent_repo
run_case inherit_pid_namespace t_inherit_pid_namespace
run_case exit_statuses t_exit_statuses
# The deliberate differences seen, one line each with the cases that showed it.
if [ -f "$T/.notes" ]; then
  sed "s#$T/[^/]*/##g" "$T/.notes" | "$PY" -c '
import sys, collections
seen = collections.OrderedDict()
for line in sys.stdin:
    case, rest = line[2:].split(": ", 1)
    seen.setdefault(rest.strip(), []).append(case)
for rest, cases in seen.items():
    print("# deliberate [%s] %s" % (", ".join(sorted(set(cases))), rest))'
fi
finish
