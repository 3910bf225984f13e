# SPDX-License-Identifier: Apache-2.0
"""The Python binding's cost over the C library, in one run (bench/python.sh runs it).

Per session command: cordon.Session.run(["true"]) (captured, stderr merged) against the same
through the C library (bench/pysession.c: spawn, read to EOF, wait, free), in alternating
blocks so that both see the same load; the difference of the medians is what the binding
adds (target: at most +0.2 ms).  Output throughput: `head -c SIZE /dev/zero` read through
cordon.run(on_output=...), through a session command, and through cordon.aio, against a plain
pipe from subprocess read the same way (target: at least 0.9 x).  Timing never fails the run.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time

import cordon
import cordon.aio

helper, blocks, per_block, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def median_ms(xs: list[float]) -> float:
    return statistics.median(xs) / 1000.0


policy = cordon.Policy(no_workspace=True, cwd="/")
c_us: list[float] = []
py_us: list[float] = []
with cordon.Session(policy) as s:
    for _ in range(5):  # warm up
        s.run(["true"])
    for b in range(blocks):
        out = subprocess.run([helper, str(per_block)], check=True, capture_output=True, text=True).stdout
        c_us += [float(x) for x in out.split()[2:]]  # (its first two: its own warm-up)
        for _ in range(per_block):
            t0 = time.perf_counter()
            r = s.run(["true"])
            py_us.append((time.perf_counter() - t0) * 1e6)
            assert r.exit_code == 0, r
c_med, py_med = median_ms(c_us), median_ms(py_us)
print(f"per session command (true, output captured), median of {len(py_us)} / {len(c_us)}:")
print(f"  C library   {c_med:.3f} ms   (p10 {statistics.quantiles(c_us, n=10)[0]/1000:.3f}, "
      f"p90 {statistics.quantiles(c_us, n=10)[-1]/1000:.3f})")
print(f"  Python      {py_med:.3f} ms   (p10 {statistics.quantiles(py_us, n=10)[0]/1000:.3f}, "
      f"p90 {statistics.quantiles(py_us, n=10)[-1]/1000:.3f})")
print(f"  the binding adds {py_med - c_med:+.3f} ms per command (target: at most +0.2 ms)")
print()

cmd = ["head", "-c", str(size), "/dev/zero"]


class Counter:
    """Counts bytes; the clock runs from the first byte to the end, so that the figure is
    the stream's, not the start of a sandbox or a process."""

    def __init__(self) -> None:
        self.n, self.t0 = 0, 0.0

    def __call__(self, b: bytes) -> None:
        if not self.n:
            self.t0 = time.perf_counter()
        self.n += len(b)

    def rate(self) -> float:
        assert self.n == size, self.n
        return size / (time.perf_counter() - self.t0) / 1e6


def plain(setsid: bool = False) -> float:
    # setsid: the command in a session of its own, as the sandbox's is (a scheduling
    # group of its own where autogroups are on: what costs on a loaded machine)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, start_new_session=setsid)
    assert p.stdout is not None
    fd, count = p.stdout.fileno(), Counter()
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        count(b)
    p.wait()
    return count.rate()


def via_run() -> float:
    count = Counter()
    r = cordon.run(cmd, policy=policy, on_output=count)
    assert r.exit_code == 0, r
    return count.rate()


def via_session(s: cordon.Session) -> float:
    count = Counter()
    r = s.run(cmd, capture=False, on_output=count)
    assert r.exit_code == 0, r
    return count.rate()


def via_aio() -> float:
    count = Counter()

    async def go() -> None:
        async with cordon.aio.spawn(cmd, policy=policy, stdin=None) as p:
            async for b in p.output():
                count(b)
            await p.wait()
    asyncio.run(go())
    return count.rate()


rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
res: dict[str, list[float]] = {"plain pipe (subprocess)": [], "plain pipe, setsid": [], "cordon.run(on_output)": [],
                                "Session.run(on_output)": [], "cordon.aio.spawn + async for": []}
with cordon.Session(policy) as s:
    for _ in range(rounds):
        res["plain pipe (subprocess)"].append(plain())
        res["plain pipe, setsid"].append(plain(True))
        res["cordon.run(on_output)"].append(via_run())
        res["Session.run(on_output)"].append(via_session(s))
        res["cordon.aio.spawn + async for"].append(via_aio())
base = statistics.median(res["plain pipe (subprocess)"])
print(f"output throughput, {size >> 20} MiB of head -c, first byte to end, median of {rounds} (alternating):")
for k, v in res.items():
    m = statistics.median(v)
    print(f"  {k:32s} {m:8.0f} MB/s   {m / base:.2f} x the plain pipe" + ("" if k.startswith("plain") else
                                                                          "   (target: at least 0.9 x)"))
