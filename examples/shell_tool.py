#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A tiny shell tool, as an agent harness has one: each line read from stdin is a command
(run with sh -c) executed in a sandbox whose workspace is the current directory, its output
streamed as it arrives, under a timeout.  Ctrl-C stops the command that runs (the whole
sandbox), not the tool.

    CORDON_LIBRARY=build/libcordon.so PYTHONPATH=python examples/shell_tool.py [--timeout S]
"""

import signal
import sys

import cordon


def show(chunk: bytes) -> None:
    """Stream the command's output as it comes."""
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


def main() -> int:
    timeout = 30.0
    if len(sys.argv) == 3 and sys.argv[1] == "--timeout":
        timeout = float(sys.argv[2])
    policy = cordon.Policy(timeout=timeout)  # workspace: the current directory
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            r = cordon.run(["sh", "-c", line], policy=policy, on_output=show)
        except KeyboardInterrupt:
            # the sandbox is already gone: cordon.run kills it before the exception leaves
            print("[stopped]", flush=True)
            continue
        except cordon.CordonError as e:
            print(f"[could not run: {e}]", flush=True)
            continue
        if r.timed_out:
            print(f"[timed out after {timeout:g} s]", flush=True)
        elif r.signal:
            print(f"[killed by signal {r.signal}]", flush=True)
        else:
            print(f"[exit {r.exit_code}]", flush=True)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
