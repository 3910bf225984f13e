# SPDX-License-Identifier: Apache-2.0
"""cordon for asyncio: the same sandbox, awaited instead of blocked on.

>>> import asyncio, cordon, cordon.aio
>>> async def main():
...     policy = cordon.Policy(workspace="/repo", timeout=60)
...     r = await cordon.aio.run(["make", "test"], policy=policy)        # captured
...     print(r.exit_code, r.output)
...     async with cordon.aio.spawn(["sh", "-c", "make 2>&1"], policy=policy) as p:
...         async for chunk in p.output():                                 # as it arrives
...             print(chunk.decode(), end="")
...         print((await p.wait()).exit_code)
...     async with cordon.aio.Session(policy) as s:                        # many commands
...         print((await s.run(["git", "status"])).output)

Nothing blocks the event loop for long: the output, the command's end (its exit
descriptor) and stdin are watched with the loop's readers and writers; only starting a
sandbox without a session (a few milliseconds of setup) runs in the loop's default
executor.  Cancelling the task that awaits a command kills the command (the whole sandbox,
or the command's process tree in a session) before the cancellation propagates.
"""

from __future__ import annotations

import asyncio
import os
from typing import AsyncIterator, Mapping, Optional, Sequence

import cordon as _c
from cordon import DEVNULL, PIPE, Cancel, Policy, Result, _Stream

__all__ = ["Process", "Session", "spawn", "run"]


async def _readable(fd: int) -> None:
    """Until fd is readable (or at its end)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    loop.add_reader(fd, lambda: fut.done() or fut.set_result(None))
    try:
        await fut
    finally:
        loop.remove_reader(fd)


async def _writable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    loop.add_writer(fd, lambda: fut.done() or fut.set_result(None))
    try:
        await fut
    finally:
        loop.remove_writer(fd)


class Process:
    """A sandboxed command, awaited: ``output()`` (``async for``), ``read_stderr()``,
    ``write()``, ``close_stdin()``, ``wait()``, ``kill()``; ``async with`` kills what still
    runs when the block is left."""

    def __init__(self, proc: _c.Process) -> None:
        self._p = proc
        for f in (proc.stdin, proc.stdout, proc.stderr, proc.pty):
            if f is not None:
                os.set_blocking(f.fileno(), False)  # our end of the pipe: read when ready

    @property
    def sync(self) -> _c.Process:
        """The blocking :class:`cordon.Process` underneath."""
        return self._p

    async def _chunks(self, fd: int) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                await _readable(fd)
                continue
            except OSError:  # a terminal whose last user closed it: EIO
                return
            if not chunk:
                return
            yield chunk

    def output(self) -> AsyncIterator[bytes]:
        """The command's stdout (with stderr when merged, or the terminal's output) in
        chunks as they arrive, until every process inside has closed it."""
        f = self._p.pty or self._p.stdout
        if f is None:
            raise ValueError("stdout is not a pipe (spawn with stdout=PIPE)")
        return self._chunks(f.fileno())

    def stderr_output(self) -> AsyncIterator[bytes]:
        """The command's stderr in chunks (``merge_stderr=False``)."""
        if self._p.stderr is None:
            raise ValueError("stderr is not a pipe (spawn with stderr=PIPE, merge_stderr=False)")
        return self._chunks(self._p.stderr.fileno())

    async def write(self, data: bytes) -> None:
        """Write all of ``data`` to the command's stdin (or its terminal)."""
        f = self._p.pty or self._p.stdin
        if f is None:
            raise ValueError("stdin is not a pipe (spawn with stdin=PIPE)")
        view = memoryview(data)
        while view:
            try:
                n = os.write(f.fileno(), view)
                view = view[n:]
            except BlockingIOError:
                await _writable(f.fileno())

    def close_stdin(self) -> None:
        """The command sees EOF on its stdin."""
        if self._p.stdin is not None:
            self._p.stdin.close()

    def kill(self, sig: int = 9) -> None:
        """As :meth:`cordon.Process.kill` (thread- and async-safe)."""
        self._p.kill(sig)

    async def wait(self, timeout: Optional[float] = None) -> Result:
        """The command's end (and of everything it left), without blocking the loop.

        :raises asyncio.TimeoutError: when ``timeout`` passes first (it runs on)"""
        async def until_end() -> Result:
            while True:
                res = self._p.poll()
                if res is not None:
                    return res
                await _readable(self._p.exit_fd)

        try:
            return await asyncio.wait_for(until_end(), timeout)
        except asyncio.CancelledError:
            self._p.kill()
            raise

    def close(self) -> None:
        self._p.close()

    async def __aenter__(self) -> "Process":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._p.close()


def _spawn_kw(stdin: Optional[_Stream], input: Optional[bytes]) -> Optional[_Stream]:
    return PIPE if input is not None else stdin


class _Spawning:
    """What ``spawn`` returns: awaitable (the process) and an async context manager (the
    process, killed at the end of the block)."""

    def __init__(self, start) -> None:  # type: ignore[no-untyped-def]
        self._start = start
        self._proc: Optional[Process] = None

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._start().__await__()

    async def __aenter__(self) -> Process:
        self._proc = await self._start()
        return self._proc

    async def __aexit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.close()


def spawn(argv: Sequence[_c.PathLike], *, policy: Optional[Policy] = None, stdin: Optional[_Stream] = PIPE,
          stdout: Optional[_Stream] = PIPE, stderr: Optional[_Stream] = None, merge_stderr: bool = True,
          pty: bool = False, cwd: Optional[_c.PathLike] = None, env: Optional[Mapping[str, str]] = None,
          timeout: Optional[float] = None, cancel: Optional[Cancel] = None) -> _Spawning:
    """Start ``argv`` (as :func:`cordon.spawn`; stderr merged into stdout by default):
    ``p = await spawn(...)`` or ``async with spawn(...) as p``."""

    async def start() -> Process:
        loop = asyncio.get_running_loop()
        proc = await loop.run_in_executor(
            None, lambda: _c.spawn(argv, policy=policy, stdin=stdin, stdout=stdout, stderr=stderr,
                                   merge_stderr=merge_stderr, pty=pty, cwd=cwd, env=env, timeout=timeout,
                                   cancel=cancel))
        return Process(proc)

    return _Spawning(start)


async def _complete(p: Process, capture: bool, merge_stderr: bool, input: Optional[bytes],
                    on_output) -> Result:  # type: ignore[no-untyped-def]
    out: list[bytes] = []
    err: list[bytes] = []

    async def pump(it: AsyncIterator[bytes], into: list[bytes]) -> None:
        async for chunk in it:
            if capture:
                into.append(chunk)
            if on_output is not None and on_output(chunk):
                p.kill()

    async def feed() -> None:
        if input:
            try:
                await p.write(input)
            except BrokenPipeError:
                pass
        p.close_stdin()

    try:
        tasks = [pump(p.output(), out), feed()]
        if not merge_stderr:
            tasks.append(pump(p.stderr_output(), err))
        await asyncio.gather(*tasks)
        res = await p.wait()
    except asyncio.CancelledError:
        p.kill()
        raise
    if capture:
        res = res._with(stdout=b"".join(out), stderr=None if merge_stderr else b"".join(err))
    return res


async def run(argv: Sequence[_c.PathLike], *, policy: Optional[Policy] = None, capture: bool = True,
              merge_stderr: bool = True, input: Optional[bytes] = None, on_output=None,  # type: ignore[no-untyped-def]
              cwd: Optional[_c.PathLike] = None, env: Optional[Mapping[str, str]] = None,
              timeout: Optional[float] = None, cancel: Optional[Cancel] = None) -> Result:
    """Run ``argv`` to completion (as :func:`cordon.run`), its output captured by default."""
    async with spawn(argv, policy=policy, stdin=PIPE, stdout=PIPE, stderr=None if merge_stderr else PIPE,
                     merge_stderr=merge_stderr, cwd=cwd, env=env, timeout=timeout, cancel=cancel) as p:
        return await _complete(p, capture, merge_stderr, input, on_output)


class Session:
    """A :class:`cordon.Session` for asyncio: ``async with Session(policy) as s``, then
    ``await s.run(...)`` or ``async with s.spawn(...) as p``.  Starting a command in a
    session takes a few hundred microseconds, done in the loop's thread."""

    def __init__(self, policy: Optional[Policy] = None, *, idle_timeout: Optional[float] = None,
                 _session: Optional[_c.Session] = None) -> None:
        self._policy = policy
        self._idle = idle_timeout
        self._s: Optional[_c.Session] = _session

    @classmethod
    def open(cls, name: str) -> "Session":
        """A published session (``cordon session start NAME``)."""
        return cls(_session=_c.Session.open(name))

    async def start(self) -> "Session":
        if self._s is None:
            loop = asyncio.get_running_loop()
            self._s = await loop.run_in_executor(None, lambda: _c.Session(self._policy, idle_timeout=self._idle))
        return self

    @property
    def sync(self) -> _c.Session:
        if self._s is None:
            raise ValueError("the session is not started (async with Session(...), or await s.start())")
        return self._s

    def spawn(self, argv: Sequence[_c.PathLike], *, stdin: Optional[_Stream] = PIPE,
              stdout: Optional[_Stream] = PIPE, stderr: Optional[_Stream] = None, merge_stderr: bool = True,
              tty: bool = False, cwd: Optional[_c.PathLike] = None, env: Optional[Mapping[str, str]] = None,
              timeout: Optional[float] = None, keep: bool = False, cancel: Optional[Cancel] = None) -> _Spawning:
        async def start() -> Process:
            return Process(self.sync.spawn(argv, stdin=stdin, stdout=stdout, stderr=stderr,
                                           merge_stderr=merge_stderr, tty=tty, cwd=cwd, env=env, timeout=timeout,
                                           keep=keep, cancel=cancel))

        return _Spawning(start)

    async def run(self, argv: Sequence[_c.PathLike], *, capture: bool = True, merge_stderr: bool = True,
                  input: Optional[bytes] = None, on_output=None,  # type: ignore[no-untyped-def]
                  cwd: Optional[_c.PathLike] = None, env: Optional[Mapping[str, str]] = None,
                  timeout: Optional[float] = None, keep: bool = False, cancel: Optional[Cancel] = None) -> Result:
        """Run ``argv`` in the session to completion (as :meth:`cordon.Session.run`)."""
        async with self.spawn(argv, stdin=PIPE, stdout=PIPE, stderr=None if merge_stderr else PIPE,
                              merge_stderr=merge_stderr, cwd=cwd, env=env, timeout=timeout, keep=keep,
                              cancel=cancel) as p:
            return await _complete(p, capture, merge_stderr, input, on_output)

    async def close(self) -> None:
        s, self._s = self._s, None
        if s is not None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, s.close)  # waits until everything in it is gone

    async def __aenter__(self) -> "Session":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ += ["DEVNULL", "PIPE"]
