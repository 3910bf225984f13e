#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The two agent CLIs that run the first `bwrap` on PATH, unmodified, with cordon's bwrap
# and with Debian's /usr/bin/bwrap in turn, over the same agent commands: stock Codex CLI
# 0.169 (`codex sandbox`, read-only, workspace-write, workspace-write with network) and
# sandbox-runtime 0.0.78 (`srt`, a filesystem setting and a network one).  Each command's
# outcome (succeeded or failed) and what it left on the host must be the same, except
# where cordon is stricter: those differences are listed below and in doc/codex.md (the
# Codex ones) and doc/bwrap.md (sandbox-runtime's), and a listed one that no longer
# happens fails too, so that the lists stay true.  As root and as uid 65534.
. "$(dirname "$0")/lib.sh"
require_cordon

REAL_BWRAP=/usr/bin/bwrap
CODEX=${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}/node_modules/.bin/codex
SRT=${CORDON_SRT_PREFIX:-/opt/cordon-test/srt}/node_modules/.bin/srt

need_real() {
  [ -x "$REAL_BWRAP" ] && "$REAL_BWRAP" --ro-bind / / true 2>/dev/null ||
    skip_case "Debian's $REAL_BWRAP is missing or does not run here (as uid $(id -u)): nothing to compare with"
}
need_tools() {
  local t
  for t in git cc make "$PY"; do command -v "$t" >/dev/null || skip_case "$t is missing (./bootstrap.sh installs it)"; done
}

# The agent's commands, one outcome line each ("NAME ok" or "NAME fail"), run in the
# workspace by the peer's sandbox.  $1: the host directory outside the workspace, $2 the
# port of a host server on 127.0.0.1, $3 a file the settings may hide, $4 (Codex
# workspace-write only) Debian's python3 for the venv step: a wheel built from the
# workspace's ./pkg with Debian's setuptools, installed into a new venv, offline.
AGENT='
step() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n ok"; else echo "$n fail"; fi; }
echo "filters $(sed -n "s/^Seccomp_filters:[[:space:]]*//p" /proc/self/status)" >&2
step read cat README
step git-status git status --porcelain
step git-log git log --oneline
step write-inside sh -c "echo x >new.txt"
step git-add git add new.txt
step git-commit git -c user.name=a -c user.email=a@b.c commit -qm x
step cc sh -c "printf \"int main(void){return 0;}\\n\" >t.c && cc -o t t.c && ./t"
step make sh -c "printf \"all:\\n\\techo m >made\\n\" >Makefile && make -s"
step write-outside sh -c "echo x >$1/out.txt"
step read-secret grep -q . "$3"
step git-hooks sh -c "echo x >.git/hooks/pre-commit"
step git-config sh -c "echo x >>.git/config"
step codex-dir sh -c "mkdir -p .codex/sub"
step vscode sh -c "mkdir .vscode"
step loopback python3 -c "
import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=5); a, _ = s.accept(); a.sendall(b\"p\"); assert c.recv(1) == b\"p\""
step host-port python3 -c "
import socket
socket.create_connection((\"127.0.0.1\", $2), timeout=5).recv(5)"
step name python3 -c "
import os, urllib.request
urllib.request.urlopen(\"http://refused.invalid/\", timeout=10)"
[ -z "$4" ] || step venv sh -c "exec >venv.log 2>&1; $4 -m venv v &&
  $4 -m pip wheel -q --no-index --no-build-isolation --no-deps --no-cache-dir -w wheels ./pkg &&
  v/bin/pip install -q --no-index --no-cache-dir wheels/cordon_peer-1.0-py3-none-any.whl &&
  v/bin/python -c \"import cordon_peer; assert cordon_peer.VALUE == 42\""
'

# What a run left on the host: the files the steps may have made, git's view, the commits.
host_state() {
  local ws=$1 out=$2 f
  for f in new.txt t made Makefile .codex .vscode .git/hooks/pre-commit; do
    if [ -e "$ws/$f" ]; then echo "host $f"; fi
  done
  [ -e "$out/out.txt" ] && echo "host outside/out.txt"
  echo "config $(wc -l <"$ws/.git/config")"
  echo "commits $(git -C "$ws" rev-list --count HEAD)"
  # what git shows besides the steps' own files: a mount point left behind
  git -C "$ws" status --porcelain --untracked-files=all | grep -v -e ' new.txt$' -e ' t$' -e ' t.c$' -e ' made$' -e ' Makefile$' |
    sed 's/^/status /'
}

# run_peer WHICH BIN: the agent's steps through the peer with the bwrap of BIN first on
# PATH, in a fresh copy of the workspace; the outcomes and the host's state into $CT/WHICH.
# PEER_CMD: the peer's command line before the command; PEER_VENV: the python3 of the
# venv step, when it runs (one more step).
run_peer() {
  local which=$1 bin=$2 ws out
  ws=$(scratch_outside_tmp)
  out=$(scratch_outside_tmp)
  cp -a "$CT/template/." "$ws/"
  (cd "$ws" && HOME=$PEER_HOME PATH=$bin:$PATH timeout 180 "${PEER_CMD[@]}" sh "$PEER_HOME/agent.sh" "$out" "$SERVER_PORT" "$SECRET" "${PEER_VENV:-}") \
    >"$CT/$which.run" 2>"$CT/$which.err" || true
  grep -E '^[a-z-]+ (ok|fail)$' "$CT/$which.run" >"$CT/$which" || true
  [ ! -e "$ws/venv.log" ] || cp "$ws/venv.log" "$CT/$which.venv"
  FILTERS=$(sed -n 's/^filters //p' "$CT/$which.err")
  local steps=17
  [ -z "${PEER_VENV:-}" ] || steps=18
  [ "$(wc -l <"$CT/$which")" = "$steps" ] ||
    die "$which: the peer ran $(wc -l <"$CT/$which") of $steps steps: $(head -c 600 "$CT/$which.run" "$CT/$which.err" | _one_line)"
  host_state "$ws" "$out" >>"$CT/$which"
}

# compare MODE EXPECTED: cordon's outcomes against bubblewrap's; EXPECTED: the steps and
# host lines where they differ, cordon stricter (space-separated).
compare() {
  local mode=$1 expected=$2 diffs=
  run_peer "$mode.bwrap" "$REAL_BIN"
  local real_filters=$FILTERS
  run_peer "$mode.cordon" "$CORDON_BIN"
  # cordon ran the command (its two filters on top of the peer's own), not a bwrap of the
  # peer's (Codex falls back to the one it bundles when it does not like the one on PATH)
  [ "${FILTERS:-0}" -ge $((${real_filters:-0} + 2)) ] ||
    die "$mode: the command ran under ${FILTERS:-?} seccomp filters with cordon's bwrap, ${real_filters:-?} with bubblewrap: cordon did not run it"
  # a positive control: under bubblewrap the workspace is writable (or, read-only, the
  # read works), so a sandbox that ran nothing does not pass
  grep -qx 'read ok' "$CT/$mode.bwrap" || die "$mode: even bubblewrap's run could not read the workspace: $(_one_line <"$CT/$mode.bwrap")"
  diffs=$(diff "$CT/$mode.bwrap" "$CT/$mode.cordon" | sed -n 's/^> //p' | awk '{print $1 ":" $2}' | sort | tr '\n' ' ')
  diffs=${diffs% }
  ! grep -q '^status ' "$CT/$mode.cordon" ||
    die "$mode: cordon's run left in the workspace: $(grep '^status ' "$CT/$mode.cordon" | _one_line)"
  local full
  full=$(diff "$CT/$mode.bwrap" "$CT/$mode.cordon" | grep '^[<>]' | _one_line) || true
  [ "$diffs" = "$expected" ] ||
    die "$mode: cordon differs from bubblewrap in '$diffs', expected '$expected' (doc/codex.md, doc/bwrap.md): $full"
  echo "# $mode: the same outcomes as bubblewrap but for: ${expected:-nothing}"
}

setup() {
  need_real
  need_tools
  # (Codex skips a bwrap under /tmp)
  REAL_BIN=$(scratch_outside_tmp)
  CORDON_BIN=$(scratch_outside_tmp)
  mkdir -p "$CT/template"
  ln -s "$REAL_BWRAP" "$REAL_BIN/bwrap"
  # a copy, not a symlink: Codex resolves a link and runs the file it points to with
  # --help, which cordon then answers as cordon, and Codex takes its own bundled bwrap
  cp "$CORDON" "$CORDON_BIN/bwrap"
  git init -q "$CT/template"
  echo hi >"$CT/template/README"
  # the venv step's package, and what building and installing it leaves, out of git's view
  mkdir -p "$CT/template/pkg/cordon_peer"
  printf '%s\n' 'from setuptools import setup' \
    'setup(name="cordon_peer", version="1.0", packages=["cordon_peer"])' >"$CT/template/pkg/setup.py"
  echo 'VALUE = 42' >"$CT/template/pkg/cordon_peer/__init__.py"
  printf '%s\n' /v/ /wheels/ /venv.log /pkg/build/ '/pkg/*.egg-info/' >>"$CT/template/.git/info/exclude"
  git -C "$CT/template" add README pkg
  git -C "$CT/template" -c user.name=a -c user.email=a@b.c commit -qm init
  PEER_HOME=$(scratch_outside_tmp)
  SECRET=$PEER_HOME/secret
  echo s >"$SECRET"
  printf '%s' "$AGENT" >"$PEER_HOME/agent.sh"
  start_tcp_server 600
}

# Codex: its own lines (doc/bwrap.md, "What the peers send").
codex_case() {
  [ -x "$CODEX" ] && command -v node >/dev/null ||
    skip_case "Codex CLI 0.169 is not installed (CORDON_CODEX=1 ./bootstrap.sh, as CI does)"
  setup
  PEER_CMD=("$CODEX" sandbox "$@" --)
}

t_codex_read_only() {
  codex_case -c sandbox_mode=read-only
  compare codex-read-only ""
}
run_case codex_read_only t_codex_read_only

t_codex_workspace_write() {
  codex_case -c sandbox_mode=workspace-write
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import ensurepip, setuptools, wheel' 2>/dev/null ||
    skip_case "Debian's python3-venv, python3-setuptools or python3-wheel is missing (./bootstrap.sh installs them)"
  PEER_VENV=/usr/bin/python3
  compare codex-workspace-write "vscode:fail"
  # the venv step's positive control: it works under bubblewrap (so both failing is no pass)
  grep -qx 'venv ok' "$CT/codex-workspace-write.bwrap" ||
    die "the venv step failed even under bubblewrap: $(tail -c 600 "$CT/codex-workspace-write.bwrap.venv" 2>&1 | _one_line)"
}
run_case codex_workspace_write t_codex_workspace_write

t_codex_workspace_write_network() {
  codex_case -c sandbox_mode=workspace-write -c sandbox_workspace_write.network_access=true
  compare codex-workspace-write-network "vscode:fail"
}
run_case codex_workspace_write_network t_codex_workspace_write_network

# sandbox-runtime: its settings file in $HOME.
srt_case() {
  [ -x "$SRT" ] && command -v node >/dev/null && command -v rg >/dev/null && command -v socat >/dev/null ||
    skip_case "sandbox-runtime, ripgrep or socat is not installed (CORDON_CODEX=1 ./bootstrap.sh, as CI does)"
  setup
  printf '%s\n' "$1" >"$PEER_HOME/.srt-settings.json"
  PEER_CMD=("$SRT")
}

t_srt_filesystem() {
  srt_case '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/secret"],"allowWrite":["."],"denyWrite":[]}}'
  compare srt-filesystem "codex-dir:fail"
}
run_case srt_filesystem t_srt_filesystem

t_srt_network() {
  srt_case '{"network":{"allowedDomains":["localhost"],"deniedDomains":["refused.invalid"],"allowLocalBinding":true},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}'
  compare srt-network "codex-dir:fail"
}
run_case srt_network t_srt_network

finish
