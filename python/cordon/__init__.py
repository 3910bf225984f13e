"""cordon: run commands in a fresh, minimal, unprivileged Linux sandbox.

A pure-ctypes binding of libcordon (no compiler needed).  The library is found through
``$CORDON_LIBRARY``, then next to this package, then the system's library path.

>>> import cordon
>>> p = cordon.Policy(workspace="/repo", allow_ro=["/data"], deny=["/repo/.env"],
...                   network="none", timeout=30, env={"CI": "1"})
>>> r = cordon.run(["make", "test"], policy=p, on_output=lambda b: print(b.decode(), end=""))
>>> r.exit_code, r.signal, r.timed_out
>>> with cordon.spawn(["cat"], policy=p) as c:
...     c.stdin.write(b"hi\\n"); c.stdin.close(); c.stdout.read(); c.wait(timeout=5)

A setup that fails raises :class:`CordonError`, whose ``stage`` names where
(``"settings"``, ``"namespaces"``, ...).  Like the C library, nothing here installs signal
handlers or touches the process's signal mask; a ``KeyboardInterrupt`` (or any exception)
while a run is waited for kills the sandbox and reaps it before it propagates.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import io
import json
import os
import select
import signal as _signal
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

from . import _native as N

__all__ = [
    "CordonError", "Result", "Policy", "Process", "run", "spawn", "check", "version",
    "PIPE", "INHERIT", "DEVNULL",
]

_lib_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def _L() -> ctypes.CDLL:
    """The library, loaded on first use (so that importing cordon never fails)."""
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                _lib = N.load()
    return _lib


class _Stream:
    """A stream choice for :func:`spawn`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"cordon.{self.name}"


PIPE = _Stream("PIPE")        #: a pipe to or from the caller (the default)
INHERIT = _Stream("INHERIT")  #: the caller's own descriptor
DEVNULL = _Stream("DEVNULL")  #: /dev/null (stdin only)

OutputCallback = Callable[[bytes], Optional[bool]]
PathLike = Union[str, bytes, "os.PathLike[str]"]


class CordonError(Exception):
    """A call failed.  ``stage`` is where (``"usage"``, ``"settings"``, ``"resolve"``, ``"plan"``,
    ``"namespaces"``, ``"root"``, ``"confine"``, ``"exec"``, ``"supervise"``, ``"limits"``),
    ``errno`` the cause's errno (0 when none), ``message`` the library's text without it,
    ``option`` the :class:`Policy` argument it is about (``"timeout"``, ``"cwd"``, ... or
    ``None``), and ``result`` the run's :class:`Result` when a run failed before its
    command started."""

    def __init__(self, stage: str, errno: int, message: str, truncated: bool = False,
                 result: Optional["Result"] = None, option: Optional[str] = None) -> None:
        self.stage = stage
        self.errno = errno
        self.message = message
        self.truncated = truncated
        self.result = result
        self.option = option
        text = (f"{option}: " if option else "") + message + (f": {os.strerror(errno)}" if errno else "")
        super().__init__(text)

    @classmethod
    def _from(cls, e: N.Error, result: Optional["Result"] = None) -> "CordonError":
        stage = N.STAGES[e.stage] if 0 <= e.stage < len(N.STAGES) else "unknown"
        return cls(stage, e.errnum, e.message.decode(errors="replace"), bool(e.truncated), result,
                   _python_name(e.option.decode(errors="replace")))


def _python_name(option: str) -> Optional[str]:
    """The :class:`Policy` argument for the library's option name ("limitMemory" ->
    "limit_memory", "chdir" -> "cwd")."""
    if not option:
        return None
    special = {"chdir": "cwd", "noProc": "proc"}
    if option in special:
        return special[option]
    return "".join("_" + c.lower() if c.isupper() else c for c in option)


def _fs(s: PathLike) -> bytes:
    return os.fsencode(s)


def _check(rc: int, e: N.Error) -> None:
    if rc < 0:
        raise CordonError._from(e)


def _argv(argv: Sequence[PathLike]) -> "ctypes.Array[ctypes.c_char_p]":
    if isinstance(argv, (str, bytes)):
        raise TypeError("argv must be a sequence of arguments, not a string (use ['sh', '-c', CMD])")
    items = [_fs(a) for a in argv]
    return (ctypes.c_char_p * (len(items) + 1))(*items, None)


@dataclass(frozen=True)
class Result:
    """How a run ended.

    ``exit_code`` is what the command line would exit with: the command's own code,
    128+N when signal N killed it, 124 on a timeout, 125/126/127 when it could not start.
    ``status`` is the command's own exit code (``None`` when it did not exit), ``signal``
    the signal that killed it (``None``)."""

    exit_code: int
    status: Optional[int]
    signal: Optional[int]
    timed_out: bool
    started: bool
    wall_seconds: float
    isolation: str
    isolation_why: Optional[str] = None
    limits: Optional[str] = None  #: "cgroup2", "cgroup1", "rlimit", or None without limits
    limits_exceeded: tuple[str, ...] = field(default_factory=tuple)
    #: how many of the command's calls the creation control refused, and the first of them
    #: as "OPERATION PATH: WHY"
    refused: int = 0
    refusals: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def _from(cls, r: N.Result) -> "Result":
        return cls(
            exit_code=r.exit_code,
            status=r.status_code if r.status_code >= 0 else None,
            signal=r.signal or None,
            timed_out=bool(r.timed_out),
            started=bool(r.started),
            wall_seconds=r.wall_seconds,
            isolation=(_L().cordon_isolation_name(r.isolation) or b"?").decode(),
            isolation_why=r.isolation_why.decode() if r.isolation_why else None,
            limits=r.limits.decode() if r.limits else None,
            limits_exceeded=tuple(n for i, n in enumerate(N.LIMIT_NAMES) if r.limits_hit & (1 << i)),
            refused=r.refused,
            refusals=_list(r.refusals, r.n_refusals),
        )


def _list(ptr: Optional[int], n: int) -> tuple[str, ...]:
    """n NUL-terminated strings one after the other at ptr."""
    out: list[str] = []
    at = ptr or 0
    for _ in range(n if at else 0):
        b = ctypes.string_at(at)
        out.append(b.decode(errors="replace"))
        at += len(b) + 1
    return tuple(out)


class Policy:
    """What a sandbox shows and allows; every argument is optional.

    :param base: ``"system"`` (default: /usr /bin /sbin /lib* /etc read-only), ``"host"``
        (the whole host read-only) or ``"empty"``
    :param workspace: the writable workspace (default: the current directory)
    :param no_workspace: expose no workspace at all
    :param allow: paths visible and writable
    :param allow_ro: paths visible, read-only
    :param deny: paths hidden (an empty, unwritable directory or file in their place)
    :param deny_glob: absolute patterns (``*``, ``?``, ``[...]``, ``**``) hidden like ``deny``
    :param glob_depth: how deep ``deny_glob`` looks below a pattern's static prefix
    :param read_only: every allowed path and the workspace read-only
    :param network: ``"none"`` (default: loopback only) or ``"host"``
    :param env: variables to set
    :param keep_env: variables passed through from this process's environment
    :param clear_env: start from an empty environment (default: a small passlist)
    :param cwd: the working directory inside (default: the current directory)
    :param timeout: seconds after which the whole sandbox is killed (exit code 124)
    :param limit_pids: processes and threads at once
    :param limit_memory: bytes, or a string such as ``"512M"``
    :param limit_cpu: CPU seconds in all
    :param settings: a settings file (or several) read first; the arguments add to it
    :param strict_settings: refuse a settings file with a top-level key that neither cordon nor
        the harnesses it shares settings with know (default: a warning); applies to ``settings``
    :param data_root: the value of ``<data-root>`` in settings
    :param protect: more names kept read-only at the top of every writable path
    :param proc: mount /proc (default True)
    :param no_nested: refuse sandboxes inside the sandbox
    :param isolation: ``"namespaces"`` (default), ``"landlock"`` or ``"auto"``
    :param allow_socket: absolute paths of host Unix sockets the command may connect to
        (every other pathname socket the sandbox did not bind is refused)

    A policy may be used by many runs, from many threads at once.  Bad values raise
    :class:`CordonError` (stage ``"usage"`` or ``"settings"``) at once.
    """

    def __init__(self, *, base: Optional[str] = None, workspace: Optional[PathLike] = None,
                 no_workspace: bool = False, allow: Iterable[PathLike] = (),
                 allow_ro: Iterable[PathLike] = (), deny: Iterable[PathLike] = (),
                 deny_glob: Iterable[str] = (), glob_depth: Optional[int] = None,
                 read_only: bool = False, network: Optional[str] = None,
                 env: Optional[Mapping[str, str]] = None, keep_env: Iterable[str] = (),
                 clear_env: bool = False, cwd: Optional[PathLike] = None,
                 timeout: Optional[float] = None, limit_pids: Optional[int] = None,
                 limit_memory: Union[int, str, None] = None, limit_cpu: Optional[int] = None,
                 settings: Union[PathLike, Sequence[PathLike], None] = None,
                 strict_settings: bool = False,
                 data_root: Optional[PathLike] = None, protect: Iterable[str] = (),
                 proc: bool = True, no_nested: bool = False,
                 isolation: Optional[str] = None, allow_socket: Iterable[PathLike] = ()) -> None:
        lib = _L()
        self._p: Optional[int] = lib.cordon_policy_new()
        if not self._p:
            raise MemoryError("cordon_policy_new")
        try:
            if strict_settings:
                self._call(lib.cordon_policy_set_strict_settings, True)
            if settings is not None:
                for f in [settings] if isinstance(settings, (str, bytes, os.PathLike)) else settings:
                    self._call(lib.cordon_policy_load_settings, _fs(f))
            if base is not None:
                self._enum(lib.cordon_base_from_string, base, lib.cordon_policy_set_base)
            if workspace is not None:
                self._call(lib.cordon_policy_set_workspace, _fs(workspace))
            if no_workspace:
                self._call(lib.cordon_policy_set_workspace, None)
            if data_root is not None:
                self._call(lib.cordon_policy_set_data_root, _fs(data_root))
            for p in allow:
                self.allow(p)
            for p in allow_ro:
                self.allow_ro(p)
            for p in deny:
                self.deny(p)
            for g in deny_glob:
                self._call(lib.cordon_policy_add_deny_glob, g.encode(), None)
            if glob_depth is not None:
                self._call(lib.cordon_policy_set_glob_depth, int(glob_depth))
            if read_only:
                self._call(lib.cordon_policy_set_read_only, True)
            if network is not None:
                self._enum(lib.cordon_network_from_string, network, lib.cordon_policy_set_network)
            for k, v in (env or {}).items():
                self._call(lib.cordon_policy_add_env, f"{k}={v}".encode())
            for k in keep_env:
                self._call(lib.cordon_policy_add_keep_env, k.encode())
            if clear_env:
                self._call(lib.cordon_policy_set_clear_env, True)
            if cwd is not None:
                self._call(lib.cordon_policy_set_cwd, _fs(cwd))
            if timeout is not None:
                self._call(lib.cordon_policy_set_timeout, float(timeout))
            for which, v in ((N.LIMIT_PIDS, limit_pids), (N.LIMIT_MEMORY, limit_memory), (N.LIMIT_CPU, limit_cpu)):
                if isinstance(v, str):
                    self._call(lib.cordon_policy_set_limit_string, which, v.encode())
                elif v is not None:
                    self._call(lib.cordon_policy_set_limit, which, int(v))
            for name in protect:
                self._call(lib.cordon_policy_add_protected, name.encode())
            if not proc:
                self._call(lib.cordon_policy_set_proc, False)
            if no_nested:
                self._call(lib.cordon_policy_set_nested, False)
            if isolation is not None:
                self._enum(lib.cordon_isolation_from_string, isolation, lib.cordon_policy_set_isolation)
            for s in allow_socket:
                self._call(lib.cordon_policy_add_allowed_socket, _fs(s))
        except BaseException:
            self.close()
            raise

    def _call(self, fn: Callable[..., int], *args: object) -> None:
        e = N.Error()
        _check(fn(self._handle(), *args, ctypes.byref(e)), e)

    def _enum(self, parse: Callable[..., int], name: str, setter: Callable[..., int]) -> None:
        e = N.Error()
        v = ctypes.c_int()
        _check(parse(name.encode(), ctypes.byref(v), ctypes.byref(e)), e)
        self._call(setter, v.value)

    def _handle(self) -> int:
        if not self._p:
            raise ValueError("this cordon.Policy is closed")
        return self._p

    def allow(self, path: PathLike) -> "Policy":
        """Make ``path`` visible and writable."""
        self._call(_L().cordon_policy_add_path, _fs(path), N.ACCESS_WRITE, b"allow")
        return self

    def allow_ro(self, path: PathLike) -> "Policy":
        """Make ``path`` visible, read-only."""
        self._call(_L().cordon_policy_add_path, _fs(path), N.ACCESS_READ, b"allow_ro")
        return self

    def deny(self, path: PathLike) -> "Policy":
        """Hide ``path``, even inside an allowed path."""
        self._call(_L().cordon_policy_add_path, _fs(path), N.ACCESS_NONE, b"deny")
        return self

    def tmpfs(self, path: PathLike, mode: int = 0o755, size: int = 0) -> "Policy":
        """Mount a private, empty, writable tmpfs of ``mode`` at ``path`` inside the sandbox,
        over what the rules show there (bubblewrap's ``--tmpfs``); ``size`` bytes at most
        (``--size``), or 0 for no size of its own."""
        self._call(_L().cordon_policy_add_tmpfs, _fs(path), mode, size)
        return self

    def symlink(self, path: PathLike, target: PathLike) -> "Policy":
        """Make a symlink at ``path`` pointing to ``target``, inside cordon's own mounts
        (bubblewrap's ``--symlink``)."""
        self._call(_L().cordon_policy_add_symlink, _fs(path), _fs(target))
        return self

    def protections(self, on: bool) -> "Policy":
        """cordon's protections on top of the rules (default on); off is bubblewrap's exact
        mode: no creation control, nothing hidden beyond the rules, no seccomp filter, no
        Landlock (doc/bwrap.md)."""
        self._call(_L().cordon_policy_set_protections, bool(on))
        return self

    @property
    def settings_enabled(self) -> Optional[bool]:
        """The settings files' ``sandbox.enabled`` (``None`` when none said).  A run under a
        policy whose settings say ``false`` is refused: a harness that honours the setting
        does not call cordon at all."""
        v = _L().cordon_policy_settings_enabled(self._handle())
        return None if v < 0 else bool(v)

    @property
    def settings_sandboxed(self) -> Optional[bool]:
        """The settings files' ``orchestration.sandboxed`` (``None`` when none said): whether
        a harness should confine its subagents (see doc/api.md)."""
        fn = getattr(_L(), "cordon_policy_settings_sandboxed", None)
        if fn is None:
            return None
        v = fn(self._handle())
        return None if v < 0 else bool(v)

    def close(self) -> None:
        """Free the policy (also done when it is garbage-collected)."""
        p, self._p = self._p, None
        if p:
            _L().cordon_policy_free(p)

    def __enter__(self) -> "Policy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _policy_or_default(policy: Optional[Policy]) -> tuple[Policy, bool]:
    if policy is not None:
        return policy, False
    return Policy(), True


class _StdinRaw(io.FileIO):
    """The write end of the command's stdin: closing it closes the library's descriptor,
    so the command sees EOF."""

    def __init__(self, proc: "Process", fd: int) -> None:
        super().__init__(fd, "wb", closefd=False)
        self._proc = proc

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._proc._close_stdin()


class _ReadRaw(io.FileIO):
    """A read end; the descriptor itself is the library's, closed when the process is."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd, "rb", closefd=False)


class Process:
    """A sandboxed child started by :func:`spawn`.

    ``stdin``, ``stdout`` and ``stderr`` are binary file objects (``None`` when not piped).
    Leaving a ``with`` block (or :meth:`close`) kills what still runs and reaps it."""

    def __init__(self, handle: int, policy: Policy, owns_policy: bool) -> None:
        self._c: Optional[int] = handle
        self._policy = policy  # kept alive while the process is
        self._owns_policy = owns_policy
        self._result: Optional[Result] = None
        self._lock = threading.Lock()
        lib = _L()
        fd_in, fd_out, fd_err = (lib.cordon_proc_stdin(handle), lib.cordon_proc_stdout(handle),
                                 lib.cordon_proc_stderr(handle))
        self.stdin: Optional[io.BufferedWriter] = io.BufferedWriter(_StdinRaw(self, fd_in)) if fd_in >= 0 else None
        self.stdout: Optional[io.BufferedReader] = io.BufferedReader(_ReadRaw(fd_out)) if fd_out >= 0 else None
        self.stderr: Optional[io.BufferedReader] = io.BufferedReader(_ReadRaw(fd_err)) if fd_err >= 0 else None
        fd_pty = lib.cordon_proc_pty(handle)
        #: ``spawn(pty=True)``: the terminal's master, unbuffered, read and write (reads
        #: raise ``OSError`` EIO once every process inside has closed the terminal); set its
        #: size with ``fcntl.ioctl(p.pty, termios.TIOCSWINSZ, ...)``
        self.pty: Optional[io.FileIO] = io.FileIO(fd_pty, "r+b", closefd=False) if fd_pty >= 0 else None

    def _handle(self) -> int:
        if not self._c:
            raise ValueError("this cordon.Process is closed")
        return self._c

    def _close_stdin(self) -> None:
        if self._c:
            _L().cordon_proc_close_stdin(self._c, None)

    @property
    def exit_fd(self) -> int:
        """A descriptor that becomes readable once the whole sandbox has ended (for
        ``select``/``poll``/``asyncio``); owned by the process."""
        return _L().cordon_proc_exit_fd(self._handle())

    def kill(self, sig: int = _signal.SIGKILL) -> None:
        """Send ``sig``: ``SIGKILL`` (the default) ends the whole sandbox at once; ``SIGINT``,
        ``SIGTERM``, ``SIGHUP``, ``SIGQUIT``, ``SIGUSR1``, ``SIGUSR2``, ``SIGWINCH`` and
        ``SIGCONT`` go to the command.  A process that has ended is left alone."""
        e = N.Error()
        if _L().cordon_proc_kill(self._handle(), int(sig), ctypes.byref(e)) < 0:
            if e.errnum == _errno.ESRCH:
                return
            raise OSError(e.errnum, e.message.decode(errors="replace"))

    def poll(self) -> Optional[Result]:
        """The result if the command has ended (and everything it left), else ``None``."""
        return self._wait_once(0)

    def _wait_once(self, timeout_ms: int) -> Optional[Result]:
        with self._lock:
            if self._result is not None:
                return self._result
            r, e = N.Result(), N.Error()
            rc = _L().cordon_proc_wait(self._handle(), timeout_ms, ctypes.byref(r), ctypes.byref(e))
            if rc < 0:
                raise CordonError._from(e)
            if rc == 1:
                return None
            try:
                res = Result._from(r)
            finally:
                _L().cordon_result_free(ctypes.byref(r))
            if not res.started and not res.timed_out:
                raise CordonError._from(e, res)
            self._result = res
            return res

    def wait(self, timeout: Optional[float] = None) -> Result:
        """Wait for the command and every process it left to end, and return how.

        :raises TimeoutError: when ``timeout`` (seconds) passes first (the process runs on)
        :raises CordonError: when the command could not start (``.stage``, ``.result``)

        The wait can be interrupted (Ctrl-C raises ``KeyboardInterrupt`` within ~0.1 s); the
        process then runs on, to be killed by :meth:`kill` or :meth:`close`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        fd = self.exit_fd
        while True:
            res = self._wait_once(0)
            if res is not None:
                return res
            left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            if left <= 0:
                raise TimeoutError(f"the sandboxed command is still running after {timeout} s")
            # readable once the sandbox is gone; in slices, so that signals are handled and
            # the library's own deadline backstop gets to run (cordon_proc_wait)
            select.select([fd], [], [], left)

    def close(self) -> None:
        """Kill what still runs, reap it, close the streams.  Idempotent."""
        with self._lock:
            c, self._c = self._c, None
        for f in (self.stdin, self.stdout, self.stderr, self.pty):
            if f is not None:
                try:
                    f.close()
                except (OSError, ValueError):
                    pass
        if c:
            _L().cordon_proc_free(c)
        if self._owns_policy:
            self._policy.close()

    def __enter__(self) -> "Process":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def spawn(argv: Sequence[PathLike], *, policy: Optional[Policy] = None,
          stdin: Optional[_Stream] = PIPE, stdout: Optional[_Stream] = PIPE,
          stderr: Optional[_Stream] = PIPE, merge_stderr: bool = False, pty: bool = False) -> Process:
    """Start ``argv`` sandboxed under ``policy`` (default: ``Policy()``) and return at once.

    ``stdin``: :data:`PIPE` (default), ``None``/:data:`DEVNULL` (``/dev/null``) or
    :data:`INHERIT`; ``stdout``, ``stderr``: :data:`PIPE` (default) or ``None``/:data:`INHERIT`;
    ``merge_stderr=True`` sends stderr into the stdout pipe.  ``pty=True``: the command's
    stdin, stdout and stderr are a terminal of the sandbox's own, its controlling terminal,
    whose master is ``.pty`` (``stdin``, ``stdout``, ``stderr`` and ``merge_stderr`` are then
    not used).

    :raises CordonError: when the arguments, the policy or the plan are not right; nothing
        is started then
    """
    flags = 0
    if pty:
        flags = N.SPAWN_PTY
    elif stdin is PIPE:
        flags |= N.SPAWN_STDIN_PIPE
    elif stdin is INHERIT:
        flags |= N.SPAWN_STDIN_INHERIT
    elif stdin is not None and stdin is not DEVNULL:
        raise ValueError(f"stdin: PIPE, DEVNULL, INHERIT or None, not {stdin!r}")
    if pty:
        pass
    elif stdout is PIPE:
        flags |= N.SPAWN_STDOUT_PIPE
    elif stdout is not None and stdout is not INHERIT:
        raise ValueError(f"stdout: PIPE, INHERIT or None, not {stdout!r}")
    if pty:
        pass
    elif merge_stderr:
        flags |= N.SPAWN_MERGE_STDERR  # the library refuses it without a stdout pipe
    elif stderr is PIPE:
        flags |= N.SPAWN_STDERR_PIPE
    elif stderr is not None and stderr is not INHERIT:
        raise ValueError(f"stderr: PIPE, INHERIT or None, not {stderr!r}")
    pol, owns = _policy_or_default(policy)
    try:
        out = ctypes.c_void_p()
        e = N.Error()
        _check(_L().cordon_spawn(pol._handle(), _argv(argv), flags, ctypes.byref(out), ctypes.byref(e)), e)
    except BaseException:
        if owns:
            pol.close()
        raise
    return Process(out.value, pol, owns)


def run(argv: Sequence[PathLike], *, policy: Optional[Policy] = None,
        on_output: Optional[OutputCallback] = None, stdin: Optional[_Stream] = None) -> Result:
    """Run ``argv`` sandboxed to completion and return how it ended.

    With ``on_output``, stdout and stderr are merged and handed to it as ``bytes`` as they
    arrive (stdin is ``/dev/null``); the callback returning ``True`` stops the run (the
    whole sandbox is killed; the result then says ``SIGKILL``).  Without it the command
    uses this process's stdout and stderr, and its stdin when ``stdin=INHERIT``.

    :raises CordonError: when the command could not start (``.stage``; ``.result`` has the
        exit code 125, 126 or 127)
    """
    if on_output is None:
        with spawn(argv, policy=policy, stdin=stdin if stdin is not None else DEVNULL,
                   stdout=INHERIT, stderr=INHERIT) as c:
            return c.wait()
    with spawn(argv, policy=policy, stdin=DEVNULL, stdout=PIPE, merge_stderr=True) as c:
        assert c.stdout is not None
        fd = c.stdout.fileno()
        stopped = False
        while True:
            chunk = os.read(fd, 1 << 16)  # EOF once the whole sandbox is gone
            if not chunk:
                break
            if not stopped and on_output(chunk):
                stopped = True
                c.kill()
        return c.wait()


def check() -> dict:
    """What this host supports and what the default sandbox needs (``cordon check --json``),
    as a dict: ``default_sandbox``, ``error`` and ``checks``."""
    lib = _L()
    out = ctypes.c_void_p()
    e = N.Error()
    if lib.cordon_check(ctypes.byref(out), ctypes.byref(e)) < 0:
        raise CordonError._from(e)
    try:
        return json.loads(ctypes.string_at(out.value).decode())
    finally:
        lib.cordon_free(out)


def version() -> str:
    """libcordon's version."""
    return _L().cordon_version().decode()
