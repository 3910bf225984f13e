#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Inside cordon's sandbox, in a container of the matrix (tests/containers/inside.sh runs
# it): each confinement check, "NAME ok|refused".
#   probe.sh OUTSIDE_DIR LOOPBACK_PORT OTHER_PID
outside=$1 port=$2 other=$3
r() { if "$@" >/dev/null 2>&1; then echo ok; else echo refused; fi; }
echo "read_outside $(r cat "$outside/secret")"
echo "write_outside $(r sh -c 'echo x >"$1/new"' _ "$outside")"
echo "workspace_top $(r touch ./top-file)"
echo "git_commit $(r git -c user.email=m@x -c user.name=m commit -q --allow-empty -m inside)"
echo "git_hooks $(r sh -c 'echo x >.git/hooks/pre-commit')"
echo "codex $(r mkdir .codex)"
echo "loopback_outside $(r python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 3).recv(1)' "$port")"
# (cat, not a redirection: a descriptor opened before an exec reads the old, gone memory)
echo "other_environ $(r sh -c 'set -o pipefail 2>/dev/null; cat "/proc/$1/environ" | tr "\0" "\n" | grep -q env-secret-77' _ "$other")"
echo "own_environ $(r sh -c 'cat /proc/self/environ | tr "\0" "\n" | grep -q PATH=')"
