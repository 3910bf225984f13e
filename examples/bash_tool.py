#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An agent's bash tool, complete: one sandbox session per workspace, each call with its own
directory and timeout, stdout and stderr apart, 127/126 as results, a stop button.
    pip install ./python && examples/bash_tool.py /path/to/repo   (one command per line)"""
import asyncio, json, sys

import cordon, cordon.aio


class BashTool:
    def __init__(self, workspace: str, timeout: float = 120) -> None:
        self.policy = cordon.Policy(workspace=workspace, timeout=timeout)  # the repo, writable
        self.session = cordon.aio.Session(self.policy)  # HOME, /tmp and processes persist
        self.cancel = cordon.Cancel()  # the harness's stop button, from any thread

    async def __call__(self, command: str, cwd: str = ".", timeout: float = 120) -> dict:
        r = await self.session.run(["bash", "-c", command], cwd=cwd, timeout=timeout,
                                   merge_stderr=False, cancel=self.cancel)
        return {"exit_code": r.exit_code, "stdout": r.stdout.decode(errors="replace")[-30000:],
                "stderr": (r.error or r.stderr.decode(errors="replace"))[-10000:],
                "timed_out": r.timed_out, "refused": list(r.refusals)}


async def main() -> None:
    tool = BashTool(sys.argv[1] if len(sys.argv) > 1 else ".")
    async with tool.session:
        for line in sys.stdin:
            print(json.dumps(await tool(line.strip())), flush=True)

if __name__ == "__main__":
    asyncio.run(main())
