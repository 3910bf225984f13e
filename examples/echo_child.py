#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A long-lived child driven over stdio, as a harness drives a language server or an MCP
server: a line echo server started once in a sandbox, sent requests line by line, each
answer read back before the next; then its stdin is closed and it is waited for.

    CORDON_LIBRARY=build/libcordon.so PYTHONPATH=python examples/echo_child.py [LINE...]
"""

import sys
import time

import cordon

SERVER = ["sh", "-c", "while IFS= read -r l; do printf 'echo: %s\\n' \"$l\"; done"]


def main() -> int:
    requests = sys.argv[1:] or ["hello", "from the harness", "bye"]
    policy = cordon.Policy(no_workspace=True, cwd="/")  # the server needs no files of ours
    t0 = time.monotonic()
    with cordon.spawn(SERVER, policy=policy, stderr=None) as server:
        for req in requests:
            t = time.monotonic()
            server.stdin.write(req.encode() + b"\n")
            server.stdin.flush()
            answer = server.stdout.readline()
            if not answer:
                print("echo_child: the server went away", file=sys.stderr)
                return 1
            print(f"{req} -> {answer.decode()}", end="")
            print(f"   (round trip {(time.monotonic() - t) * 1000:.3f} ms)")
        server.stdin.close()  # EOF ends it
        r = server.wait(timeout=5)
    print(f"server exited {r.exit_code} after {(time.monotonic() - t0) * 1000:.1f} ms")
    return r.exit_code


if __name__ == "__main__":
    sys.exit(main())
