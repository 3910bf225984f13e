# SPDX-License-Identifier: Apache-2.0
"""cordon: run commands in a fresh, minimal, unprivileged Linux sandbox.

A ctypes binding of libcordon.  ``pip install ./python`` builds the library and installs
it inside the package; ``meson install`` and the Debian package (``python3-cordon``) use the
system's.  ``$CORDON_LIBRARY`` names another one.  :mod:`cordon.aio` is the same for asyncio.

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
import warnings
import weakref
import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional, Sequence, TypeVar, Union

from . import _native as N

__all__ = [
    "CordonError", "Result", "Policy", "Process", "Cancel", "run", "spawn", "check", "version",
    "explain", "Session", "sessions", "stop_session", "Workspace", "Change", "Integration",
    "WorkspaceStatus", "workspaces", "PIPE", "INHERIT", "DEVNULL", "CordonWarning", "session_dir",
]

_C = TypeVar("_C", bound="_Closes")

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


class _Closes:
    """What holds a library handle: ``with`` closes it, and so does the garbage collector
    (``close()`` may be called again)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class _Stream:
    """A stream choice for :func:`spawn`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"cordon.{self.name}"


CORDON_EXIT_TIMEOUT = 124   #: the timeout expired
CORDON_EXIT_SETUP = 125     #: cordon failed before the command could start
CORDON_EXIT_NOEXEC = 126    #: found but not executable
CORDON_EXIT_NOTFOUND = 127  #: command not found

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
    #: with a network to count (a proxy, forwarded or published ports): the connections
    #: let through, refused and failed, and the hosts refused ("HOST:PORT (WHY); to allow
    #: it: FLAG")
    network: Optional[dict[str, int]] = None
    network_refusals: tuple[str, ...] = field(default_factory=tuple)
    #: what the command wrote, when captured (``run(..., capture=True)``): stdout, and
    #: stderr (``None`` when merged into stdout)
    stdout: Optional[bytes] = None
    stderr: Optional[bytes] = None
    #: why the command could not be executed (126: not executable, 127: not found), as a
    #: shell would say it; ``None`` when it ran
    error: Optional[str] = None
    #: a detached session command: its pid in the session
    pid: Optional[int] = None
    #: in a container that masks parts of /proc: what the sandbox has instead of a /proc
    #: of its own (the container's, read-only, masks kept); ``None`` when it had its own
    proc_kept: Optional[str] = None

    @property
    def ok(self) -> bool:
        """The command exited with 0."""
        return self.exit_code == 0

    @property
    def output(self) -> str:
        """The captured output as text (stdout, then stderr when kept apart)."""
        return ((self.stdout or b"") + (self.stderr or b"")).decode(errors="replace")

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
            network=({"allowed": r.network_allowed, "refused": r.network_refused, "failed": r.network_failed}
                     if r.network_counted else None),
            network_refusals=_list(r.network_refusals, r.n_network_refusals),
            pid=r.pid or None,
            proc_kept=r.proc_kept.decode() if r.proc_kept else None,
        )

    def _with(self, **kw: object) -> "Result":
        return dataclasses.replace(self, **kw)


def _list(ptr: Optional[int], n: int) -> tuple[str, ...]:
    """n NUL-terminated strings one after the other at ptr."""
    out: list[str] = []
    at = ptr or 0
    for _ in range(n if at else 0):
        b = ctypes.string_at(at)
        out.append(b.decode(errors="replace"))
        at += len(b) + 1
    return tuple(out)


class CordonWarning(UserWarning):
    """A policy's warning: most likely a mistake, though the run goes on (a rule whose path
    does not exist does nothing; a settings key nobody knows is ignored)."""


def _warn(message: str) -> None:
    warnings.warn(f"cordon: {message}", CordonWarning, stacklevel=4)


class Policy(_Closes):
    """What a sandbox shows and allows; every argument is optional.

    :param base: ``"system"`` (default: /usr /bin /sbin /lib* /etc read-only), ``"host"``
        (the whole host read-only) or ``"empty"``
    :param workspace: the writable workspace (default: the top of the current directory's git
        work tree, else the current directory; ``"."``: the current directory alone)
    :param no_workspace: expose no workspace at all
    :param allow: paths visible and writable
    :param allow_ro: paths visible, read-only
    :param deny: paths hidden (an empty, unwritable directory or file in their place)
    :param deny_glob: absolute patterns (``*``, ``?``, ``[...]``, ``**``) hidden like ``deny``
    :param glob_depth: how deep ``deny_glob`` looks below a pattern's static prefix
    :param read_only: every allowed path and the workspace read-only
    :param network: ``"none"`` (default: loopback only), ``"host"`` or ``"proxy"`` (out only
        through cordon's filtering proxy: ``allow_domain``)
    :param env: variables to set
    :param keep_env: variables passed through from this process's environment
    :param clear_env: start from an empty environment (default: a small passlist)
    :param cwd: the working directory inside (default: the current directory; the workspace
        where that would not be visible)
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
    :param toolchains: the home's tool directories (~/.cargo, ~/.pyenv, ~/.nvm, ...) read-only
    :param isolation: ``"namespaces"`` (default), ``"landlock"`` or ``"auto"``
    :param allow_socket: absolute paths of host Unix sockets the command may connect to
        (every other pathname socket the sandbox did not bind is refused)
    :param allow_domain: domains (``"example.com"``, ``"*.example.com"``) or addresses the
        command may reach through cordon's filtering proxy (network ``"proxy"`` then)
    :param deny_domain: refused even where an ``allow_domain`` matches
    :param hosts: ``{name: address}`` the proxy resolves without DNS
    :param dns_servers: name servers the proxy asks (``"ADDRESS[:PORT]"``)
    :param forward_ports: host ports (``5432``) reachable inside at the same port
    :param publish_ports: ports the command listens on made reachable on the host
        (``3000``, ``"8000:3000"`` host:inside)
    :param network_log: a file each proxy decision is appended to as a JSON line
    :param allow_unix_sockets: with the proxy, let the command make AF_UNIX sockets
    :param private_dirs: a private HOME and TMPDIR (default True)
    :param hide: paths hidden wherever the view would show them (a settings file's tokens)
    :param inherit_pid_namespace: share the caller's PID namespace and /proc (trusted use)
    :param on_warning: called with each of the policy's warnings (a rule whose path does
        not exist and so does nothing, a settings key nobody knows...), from the thread
        that loads the settings or starts the run; default: :func:`warnings.warn` with
        :class:`CordonWarning` (``None``: dropped)

    The working directory defaults to the workspace (not this process's own directory) when
    a workspace is given; a workspace or ``cwd`` that is not an existing directory is
    refused here, not at the first run.

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
                 proc: bool = True, no_nested: bool = False, toolchains: bool = False,
                 isolation: Optional[str] = None, allow_socket: Iterable[PathLike] = (),
                 allow_domain: Iterable[str] = (), deny_domain: Iterable[str] = (),
                 hosts: Optional[Mapping[str, str]] = None, dns_servers: Iterable[str] = (),
                 forward_ports: Iterable[Union[int, str]] = (), publish_ports: Iterable[Union[int, str]] = (),
                 network_log: Optional[PathLike] = None, allow_unix_sockets: bool = False,
                 private_dirs: bool = True, hide: Iterable[PathLike] = (),
                 inherit_pid_namespace: bool = False,
                 on_warning: Optional[Callable[[str], None]] = _warn) -> None:
        lib = _L()
        self.workspace = None
        self._p: Optional[int] = lib.cordon_policy_new()
        if not self._p:
            raise MemoryError("cordon_policy_new")
        try:
            # first: reading the settings files below may warn already
            self._on_warning = None
            if on_warning is not None:
                fn = on_warning

                def relay(msg: Optional[bytes], ctx: object) -> None:
                    try:
                        fn((msg or b"").decode(errors="replace"))
                    except Exception:  # nothing may unwind through libcordon's frames
                        pass
                self._on_warning = N.WARNING_FN(relay)  # kept alive as long as the policy
                self._call(lib.cordon_policy_set_warning_handler, self._on_warning, None)
            if strict_settings:
                self._call(lib.cordon_policy_set_strict_settings, True)
            if settings is not None:
                for f in [settings] if isinstance(settings, (str, bytes, os.PathLike)) else settings:
                    self._call(lib.cordon_policy_load_settings, _fs(f))
            if base is not None:
                self._enum(lib.cordon_base_from_string, base, lib.cordon_policy_set_base)
            #: the workspace (absolute), or None
            self.workspace: Optional[str] = None
            if workspace is not None:
                ws = os.path.abspath(os.fsdecode(workspace))
                if not os.path.isdir(ws):
                    raise CordonError("usage", _errno.ENOTDIR if os.path.exists(ws) else _errno.ENOENT,
                                      f"the workspace {ws} is not an existing directory", option="workspace")
                self._call(lib.cordon_policy_set_workspace, _fs(ws))
                self.workspace = ws
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
            if cwd is None and self.workspace is not None and not no_workspace:
                cwd = self.workspace  # not this process's own directory
            if cwd is not None:
                c = os.fsdecode(cwd)
                if not os.path.isabs(c) and self.workspace is not None:
                    c = os.path.join(self.workspace, c)
                # refused here, as the workspace is, not at the first run (a directory only
                # the sandbox has, a .tmpfs() path, is a call's own cwd= instead)
                if os.path.isabs(c) and not os.path.isdir(c):
                    raise CordonError("usage", _errno.ENOTDIR if os.path.exists(c) else _errno.ENOENT,
                                      f"the working directory {c} is not an existing directory; give one "
                                      "the sandbox shows (a path only the sandbox has: a call's cwd=)",
                                      option="cwd")
                self._call(lib.cordon_policy_set_cwd, _fs(c))
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
            if toolchains:
                self._call(lib.cordon_policy_set_toolchains, True)
            if isolation is not None:
                self._enum(lib.cordon_isolation_from_string, isolation, lib.cordon_policy_set_isolation)
            for s in allow_socket:
                self._call(lib.cordon_policy_add_allowed_socket, _fs(s))
            for d in allow_domain:
                self._call(lib.cordon_policy_add_allowed_domain, d.encode())
            for d in deny_domain:
                self._call(lib.cordon_policy_add_denied_domain, d.encode())
            for name, addr in (hosts or {}).items():
                self._call(lib.cordon_policy_add_host, f"{name}={addr}".encode())
            for d in dns_servers:
                self._call(lib.cordon_policy_add_dns_server, d.encode())
            for port in forward_ports:
                self._call(lib.cordon_policy_add_forwarded_port_string, str(port).encode())
            for port in publish_ports:
                self._call(lib.cordon_policy_add_published_port_string, str(port).encode())
            if network_log is not None:
                self._call(lib.cordon_policy_set_network_log, _fs(network_log))
            if allow_unix_sockets:
                self._call(lib.cordon_policy_set_allow_unix_sockets, True)
            if not private_dirs:
                self._call(lib.cordon_policy_set_private_dirs, False)
            for h in hide:
                self._call(lib.cordon_policy_add_hidden, _fs(h))
            if inherit_pid_namespace:
                self._call(lib.cordon_policy_set_inherit_pid_namespace, True)
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
    def settings_tty(self) -> Optional[bool]:
        """The settings files' ``tty`` (run on a terminal of its own: ``tty=True``), or
        ``None`` when none said; what the caller does, not the sandbox."""
        v = _L().cordon_policy_settings_tty(self._handle())
        return None if v < 0 else bool(v)

    @property
    def settings_status_json(self) -> Optional[str]:
        """The settings files' ``statusJson`` (where a harness writes the result), or None."""
        v = _L().cordon_policy_settings_status_json(self._handle())
        return None if v is None else os.fsdecode(v)

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


class Process(_Closes):
    """A sandboxed child started by :func:`spawn`.

    ``stdin``, ``stdout`` and ``stderr`` are binary file objects (``None`` when not piped).
    Leaving a ``with`` block (or :meth:`close`) kills what still runs and reaps it."""

    def __init__(self, handle: int, policy: Union[Policy, "Session"], owns_policy: bool) -> None:
        self._c: Optional[int] = handle
        self._policy = policy  # kept alive while the process is (a policy, or a session)
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
                if res.exit_code in (CORDON_EXIT_NOEXEC, CORDON_EXIT_NOTFOUND):
                    # as a shell reports it: a result, not an exception
                    res = res._with(error=e.message.decode(errors="replace"))
                else:
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


def _cmd(cwd: Optional[PathLike], env: Optional[Mapping[str, str]], timeout: Optional[float],
         base: Optional[str], keep: bool = False, detach: bool = False,
         tty: bool = False) -> tuple[Optional[N.Cmd], list[object]]:
    """A cordon_cmd for a call's own settings (None when it has none), and what must stay
    alive while the library reads it.  A relative ``cwd`` is taken from ``base`` (the
    workspace)."""
    if cwd is None and env is None and timeout is None and not keep and not detach and not tty:
        return None, []
    c = N.Cmd()
    keep_alive: list[object] = []
    if cwd is not None:
        d = os.fsdecode(cwd)
        if not os.path.isabs(d):
            if base is None:
                raise CordonError("usage", 0, f"the working directory '{d}' is relative and there is no "
                                  "workspace to take it from", option="cwd")
            d = os.path.join(base, d)
        b = os.fsencode(d)
        keep_alive.append(b)
        c.cwd = b
    if env is not None:
        arr = (ctypes.c_char_p * (len(env) + 1))(*[f"{k}={v}".encode() for k, v in env.items()], None)
        keep_alive.append(arr)
        c.env = arr
    if timeout is not None:
        c.has_timeout = True
        c.timeout = float(timeout)
    c.keep, c.detach, c.tty = keep, detach, tty
    return c, keep_alive


def _flags(stdin: Optional[_Stream], stdout: Optional[_Stream], stderr: Optional[_Stream],
           merge_stderr: bool, pty: bool) -> int:
    if pty:
        return N.SPAWN_PTY
    flags = 0
    if stdin is PIPE:
        flags |= N.SPAWN_STDIN_PIPE
    elif stdin is INHERIT:
        flags |= N.SPAWN_STDIN_INHERIT
    elif stdin is not None and stdin is not DEVNULL:
        raise ValueError(f"stdin: PIPE, DEVNULL, INHERIT or None, not {stdin!r}")
    if stdout is PIPE:
        flags |= N.SPAWN_STDOUT_PIPE
    elif stdout is not None and stdout is not INHERIT:
        raise ValueError(f"stdout: PIPE, INHERIT or None, not {stdout!r}")
    if merge_stderr:
        flags |= N.SPAWN_MERGE_STDERR  # the library refuses it without a stdout pipe
    elif stderr is PIPE:
        flags |= N.SPAWN_STDERR_PIPE
    elif stderr is not None and stderr is not INHERIT:
        raise ValueError(f"stderr: PIPE, INHERIT or None, not {stderr!r}")
    return flags


def spawn(argv: Sequence[PathLike], *, policy: Optional[Policy] = None,
          stdin: Optional[_Stream] = PIPE, stdout: Optional[_Stream] = PIPE,
          stderr: Optional[_Stream] = PIPE, merge_stderr: bool = False, pty: bool = False,
          cwd: Optional[PathLike] = None, env: Optional[Mapping[str, str]] = None,
          timeout: Optional[float] = None, cancel: Optional["Cancel"] = None,
          tty: bool = False) -> Process:
    """Start ``argv`` sandboxed under ``policy`` (default: ``Policy()``) and return at once.

    ``stdin``: :data:`PIPE` (default), ``None``/:data:`DEVNULL` (``/dev/null``) or
    :data:`INHERIT`; ``stdout``, ``stderr``: :data:`PIPE` (default) or ``None``/:data:`INHERIT`;
    ``merge_stderr=True`` sends stderr into the stdout pipe.  ``pty=True``: the command's
    stdin, stdout and stderr are a terminal of the sandbox's own, its controlling terminal,
    whose master is ``.pty`` (``stdin``, ``stdout``, ``stderr`` and ``merge_stderr`` are then
    not used).  ``tty=True`` is the same (the name :meth:`Session.spawn` and :func:`run`
    use).

    ``cwd``, ``env`` and ``timeout`` are this command's own, over the policy's, which is not
    changed (one policy serves every call): ``cwd`` relative to the policy's workspace,
    ``env`` set over its environment, ``timeout`` in seconds (0: none).  ``cancel``: a
    :class:`Cancel` whose ``cancel()``, from any thread, kills the command.

    :raises CordonError: when the arguments, the policy or the plan are not right; nothing
        is started then
    """
    flags = _flags(stdin, stdout, stderr, merge_stderr, pty or tty)
    pol, owns = _policy_or_default(policy)
    try:
        cmd, keep_alive = _cmd(cwd, env, timeout, pol.workspace)
        out = ctypes.c_void_p()
        e = N.Error()
        _check(_L().cordon_spawn_cmd(pol._handle(), _argv(argv), flags, ctypes.byref(cmd) if cmd else None,
                                     ctypes.byref(out), ctypes.byref(e)), e)
        del keep_alive
    except BaseException:
        if owns:
            pol.close()
        raise
    proc = Process(out.value, pol, owns)
    if cancel is not None:
        cancel._attach(proc)
    return proc


def _collect_tty(c: Process, on_output: Optional[OutputCallback], capture: bool) -> Optional[bytes]:
    """Read the terminal's output to its end (EIO once every process inside has closed
    it), handing chunks to ``on_output``; kill the sandbox when it returns True."""
    assert c.pty is not None
    fd, parts, stopped = c.pty.fileno(), [], False
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError as e:
            if e.errno != _errno.EIO:
                raise
            break
        if not chunk:
            break
        if capture:
            parts.append(chunk)
        if on_output is not None and not stopped and on_output(chunk):
            stopped = True
            c.kill()
    return b"".join(parts) if capture else None


def _check_tty(tty: bool, input: Optional[bytes]) -> None:
    if tty and input is not None:
        raise ValueError("input= with tty=True: write it to Process.pty (spawn(..., tty=True)) instead")


def _collect(c: Process, on_output: Optional[OutputCallback], capture: bool,
             input: Optional[bytes]) -> tuple[Optional[bytes], Optional[bytes]]:
    """Feed ``input``, read stdout and stderr (whichever are pipes) to their ends, hand
    chunks to ``on_output``; kill the sandbox when it returns True."""
    streams = [f for f in (c.stdout, c.stderr) if f is not None]
    if len(streams) == 1 and not input:
        # one stream and nothing to write: plain blocking reads, no poll per chunk
        if c.stdin is not None:
            c.stdin.close()
        fd, parts, stopped = streams[0].fileno(), [], False
        while True:
            chunk = os.read(fd, 1 << 16)  # EOF once every process inside has closed it
            if not chunk:
                break
            if capture:
                parts.append(chunk)
            if on_output is not None and not stopped and on_output(chunk):
                stopped = True
                c.kill()
        data = b"".join(parts) if capture else None
        return (data, None) if streams[0] is c.stdout else (None, data)
    import selectors
    sel = selectors.DefaultSelector()
    bufs: dict[int, list[bytes]] = {}
    for f in (c.stdout, c.stderr):
        if f is not None:
            sel.register(f.fileno(), selectors.EVENT_READ)
            bufs[f.fileno()] = []
    pending = memoryview(input) if input else None
    if c.stdin is not None:
        if pending is None:
            c.stdin.close()
        else:
            os.set_blocking(c.stdin.fileno(), False)
            sel.register(c.stdin.fileno(), selectors.EVENT_WRITE)
    stopped = False
    while sel.get_map():
        for key, _ in sel.select():
            fd = key.fd
            if c.stdin is not None and not c.stdin.closed and fd == c.stdin.fileno():
                try:
                    assert pending is not None
                    n = os.write(fd, pending[:1 << 16])
                    pending = pending[n:]
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    pending = pending[:0] if pending is not None else None
                if not pending:
                    sel.unregister(fd)
                    c.stdin.close()
                continue
            chunk = os.read(fd, 1 << 16)  # EOF once every process inside has closed it
            if not chunk:
                sel.unregister(fd)
                continue
            if capture:
                bufs[fd].append(chunk)
            if on_output is not None and not stopped and on_output(chunk):
                stopped = True
                c.kill()
    sel.close()
    out = b"".join(bufs[c.stdout.fileno()]) if capture and c.stdout is not None else None
    err = b"".join(bufs[c.stderr.fileno()]) if capture and c.stderr is not None else None
    return out, err


def run(argv: Sequence[PathLike], *, policy: Optional[Policy] = None,
        on_output: Optional[OutputCallback] = None, stdin: Optional[_Stream] = None,
        capture: bool = False, merge_stderr: bool = True, input: Optional[bytes] = None,
        cwd: Optional[PathLike] = None, env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None, cancel: Optional["Cancel"] = None, tty: bool = False) -> Result:
    """Run ``argv`` sandboxed to completion and return how it ended.

    With ``on_output`` or ``capture=True`` the output is read here: stdout and stderr
    merged (``merge_stderr``, the default) or apart, handed to ``on_output`` as ``bytes``
    as they arrive (returning ``True`` stops the run: the whole sandbox is killed, the
    result then says ``SIGKILL``) and, with ``capture``, kept in ``Result.stdout`` and
    ``Result.stderr``; ``input`` is written to the command's stdin (else it is
    ``/dev/null``).  Otherwise the command uses this process's stdout and stderr, and its
    stdin when ``stdin=INHERIT``.

    ``cwd``, ``env``, ``timeout``, ``cancel``: as :func:`spawn` (this call's own).
    ``tty=True``: on a terminal of the sandbox's own; its output (stdout and stderr, with
    the terminal's ``\r\n``) is what ``on_output`` and ``capture`` get, as ``stdout``.

    A command that is not found or not executable is a result, as in a shell: exit code
    127 or 126, ``Result.error`` saying why.

    :raises CordonError: when the sandbox could not be set up (``.stage``; ``.result`` has
        the exit code 125)
    """
    kw = dict(policy=policy, cwd=cwd, env=env, timeout=timeout, cancel=cancel)
    _check_tty(tty, input)
    if tty:
        with spawn(argv, tty=True, **kw) as c:  # type: ignore[arg-type]
            out = _collect_tty(c, on_output, capture)
            res = c.wait()
            return res._with(stdout=out, stderr=None) if capture else res
    if on_output is None and not capture:
        with spawn(argv, stdin=stdin if stdin is not None else (PIPE if input is not None else DEVNULL),
                   stdout=INHERIT, stderr=INHERIT, **kw) as c:  # type: ignore[arg-type]
            if input is not None:
                _collect(c, None, False, input)
            return c.wait()
    with spawn(argv, stdin=PIPE if input is not None else DEVNULL, stdout=PIPE,
               stderr=None if merge_stderr else PIPE, merge_stderr=merge_stderr, **kw) as c:  # type: ignore[arg-type]
        out, err = _collect(c, on_output, capture, input)
        res = c.wait()
        return res._with(stdout=out, stderr=err) if capture else res


class Cancel:
    """A cancellation token: ``cancel()``, from any thread (or a signal handler's thread),
    kills every command started with it that still runs, at once, and any started after."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: list["weakref.ref[Process]"] = []
        self.cancelled = False

    def _attach(self, proc: Process) -> None:
        with self._lock:
            self._procs.append(weakref.ref(proc))
            cancelled = self.cancelled
        if cancelled:
            proc.kill()

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            procs = [r() for r in self._procs]
        for p in procs:
            if p is not None:
                try:
                    p.kill()
                except (OSError, ValueError):
                    pass  # ended, or closed


def explain(argv: Sequence[PathLike] = ("true",), *, policy: Optional[Policy] = None,
            json_output: bool = False, verbose: bool = False) -> Union[str, dict]:
    """What a run of ``argv`` under ``policy`` would do (``cordon explain``): the resolved
    rules and the mount plan as text, or (``json_output=True``) as a dict; runs nothing."""
    pol, owns = _policy_or_default(policy)
    try:
        flags = (0x2 if json_output else 0) | (0x1 if verbose else 0)
        out = ctypes.c_void_p()
        e = N.Error()
        _check(_L().cordon_explain(pol._handle(), _argv(argv), flags, ctypes.byref(out), ctypes.byref(e)), e)
        try:
            text = ctypes.string_at(out.value).decode(errors="replace")
        finally:
            _L().cordon_free(out)
        return json.loads(text) if json_output else text
    finally:
        if owns:
            pol.close()


class Session(_Closes):
    """One sandbox built once, that commands start in, each in a few hundred microseconds
    (doc/api.md, "Sessions").  Commands of a session share its view, its HOME, /tmp and
    network, and see each other's processes; each has its own exit status, output and
    timeout, and what it leaves running is killed when it exits unless ``keep=True``.

    ``Session(policy)`` builds one for this process (it ends with :meth:`close`, the
    ``with`` block, or this process); ``Session.open(name)`` connects to one published by
    ``cordon session start NAME``.  The policy's timeout is each command's default."""

    def __init__(self, policy: Optional[Policy] = None, *, idle_timeout: Optional[float] = None,
                 _handle: Optional[int] = None, _name: Optional[str] = None) -> None:
        self._policy: Optional[Policy] = None
        self._owns_policy = False
        self.name = _name
        if _handle is not None:
            self._s: Optional[int] = _handle
            self.workspace: Optional[str] = None
            return
        pol, self._owns_policy = _policy_or_default(policy)
        self._policy = pol
        self.workspace = pol.workspace
        out = ctypes.c_void_p()
        e = N.Error()
        try:
            _check(_L().cordon_session_new(pol._handle(), ctypes.byref(out), ctypes.byref(e)), e)
        except BaseException:
            if self._owns_policy:
                pol.close()
            raise
        self._s = out.value
        if idle_timeout is not None:
            self._call(_L().cordon_session_set_idle_timeout, float(idle_timeout))

    @classmethod
    def open(cls, name: str) -> "Session":
        """A session published under ``name`` by this user (``cordon session start NAME``);
        closing it only disconnects."""
        out = ctypes.c_void_p()
        e = N.Error()
        _check(_L().cordon_session_open(name.encode(), ctypes.byref(out), ctypes.byref(e)), e)
        return cls(_handle=out.value, _name=name)

    def _handle(self) -> int:
        if not self._s:
            raise ValueError("this cordon.Session is closed")
        return self._s

    def _call(self, fn: Callable[..., int], *args: object) -> None:
        e = N.Error()
        _check(fn(self._handle(), *args, ctypes.byref(e)), e)

    def listen(self, name: str) -> None:
        """Publish this session under ``name`` to this user's other processes."""
        self._call(_L().cordon_session_listen, name.encode())
        self.name = name

    def serve(self, watch_fd: int = -1) -> int:
        """Serve the session published by :meth:`listen`: start each command that arrives
        (``cordon session exec NAME``, :meth:`Session.open`), answer :func:`sessions` and
        :func:`stop_session`; blocks (run it in a thread of its own: this session's
        :meth:`spawn` and :meth:`run` may be called meanwhile).  Returns 0 on a stop
        request, 1 once ``watch_fd`` (a pidfd, say; -1: none) is readable, 2 when the
        session ended by itself (its idle timeout); then :meth:`close` it."""
        e = N.Error()
        rc = _L().cordon_session_serve(self._handle(), int(watch_fd), ctypes.byref(e))
        _check(rc, e)
        return int(rc)

    def spawn(self, argv: Sequence[PathLike], *, stdin: Optional[_Stream] = PIPE,
              stdout: Optional[_Stream] = PIPE, stderr: Optional[_Stream] = PIPE,
              merge_stderr: bool = False, tty: bool = False, cwd: Optional[PathLike] = None,
              env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
              keep: bool = False, detach: bool = False, cancel: Optional[Cancel] = None) -> Process:
        """Start ``argv`` in the session, as :func:`spawn` does.  ``cwd`` (relative: to the
        workspace), ``env`` and ``timeout`` (0: none) are this command's own; ``keep``: what
        it leaves running stays in the session; ``detach`` (with ``keep``): ``wait()``
        returns once it has started (``Result.pid``); ``tty``: a terminal (``Process.pty``)."""
        flags = _flags(stdin, stdout, stderr, merge_stderr, tty)
        cmd, keep_alive = _cmd(cwd, env, timeout, self.workspace, keep=keep, detach=detach)
        out = ctypes.c_void_p()
        e = N.Error()
        _check(_L().cordon_session_spawn_cmd(self._handle(), _argv(argv), flags, ctypes.byref(cmd) if cmd else None,
                                             ctypes.byref(out), ctypes.byref(e)), e)
        del keep_alive
        proc = Process(out.value, self, False)
        if cancel is not None:
            cancel._attach(proc)
        return proc

    def run(self, argv: Sequence[PathLike], *, capture: bool = True, merge_stderr: bool = True,
            on_output: Optional[OutputCallback] = None, input: Optional[bytes] = None,
            cwd: Optional[PathLike] = None, env: Optional[Mapping[str, str]] = None,
            timeout: Optional[float] = None, keep: bool = False,
            cancel: Optional[Cancel] = None, tty: bool = False) -> Result:
        """Run ``argv`` in the session to completion, its output captured (by default) in
        ``Result.stdout`` (and ``.stderr`` with ``merge_stderr=False``); as :func:`run`
        (``tty=True``: on a terminal of its own, its output in ``stdout``)."""
        _check_tty(tty, input)
        if tty:
            with self.spawn(argv, tty=True, stdin=None, stdout=None, stderr=None, cwd=cwd, env=env,
                            timeout=timeout, keep=keep, cancel=cancel) as c:
                out = _collect_tty(c, on_output, capture)
                res = c.wait()
                return res._with(stdout=out, stderr=None) if capture else res
        with self.spawn(argv, stdin=PIPE if input is not None else DEVNULL, stdout=PIPE,
                        stderr=None if merge_stderr else PIPE, merge_stderr=merge_stderr, cwd=cwd,
                        env=env, timeout=timeout, keep=keep, cancel=cancel) as c:
            out, err = _collect(c, on_output, capture, input)
            res = c.wait()
            return res._with(stdout=out, stderr=err) if capture else res

    def close(self) -> None:
        """End the session (one made here: everything in it) or disconnect (one opened)."""
        s, self._s = getattr(self, "_s", None), None
        if s:
            _L().cordon_session_free(s)
        if self._owns_policy and self._policy is not None:
            self._policy.close()


def sessions() -> list[dict]:
    """This user's published sessions: ``[{"name", "pid", "started"}]``."""
    out = ctypes.c_void_p()
    e = N.Error()
    _check(_L().cordon_session_list(ctypes.byref(out), ctypes.byref(e)), e)
    try:
        return list(json.loads(ctypes.string_at(out.value).decode()).get("sessions", []))
    finally:
        _L().cordon_free(out)


def session_dir() -> str:
    """The directory this user's published sessions live in (made 0700 when missing)."""
    buf = ctypes.create_string_buffer(4096)
    e = N.Error()
    _check(_L().cordon_session_dir(buf, len(buf), ctypes.byref(e)), e)
    return os.fsdecode(buf.value)


def stop_session(name: str) -> None:
    """Stop the published session ``name`` and return once everything in it is gone."""
    e = N.Error()
    _check(_L().cordon_session_stop(name.encode(), ctypes.byref(e)), e)


@dataclass(frozen=True)
class Change:
    """One change of a workspace: ``status`` ``"A"``, ``"M"``, ``"D"`` (``"C"``/``"U"``:
    a conflict), ``path`` relative to the source."""

    status: str
    path: str


def _changes(cl: N.ChangeList) -> list[Change]:
    return [Change(cl.v[i].status.decode(), os.fsdecode(cl.v[i].path)) for i in range(cl.n)]


@dataclass(frozen=True)
class Integration:
    """What :meth:`Workspace.integrate` did."""

    added: int
    modified: int
    deleted: int
    committed: bool
    commit: Optional[str]
    branch: Optional[str]
    recovered: bool
    conflicts: list[Change]
    skipped: list[Change]


@dataclass(frozen=True)
class WorkspaceStatus:
    ready: bool
    mounted: bool
    pending: bool
    in_use: bool
    detail: str


class Workspace(_Closes):
    """A copy-on-write workspace (``cordon workspace``): a writable view of a source
    directory whose changes stay in a private layer until :meth:`integrate`.

    ``Workspace.create(name, source)`` or ``Workspace.open(name)``; ``root`` is where the
    state lives (default ``$XDG_STATE_HOME/cordon/workspaces``)."""

    def __init__(self, handle: int, root: Optional[str]) -> None:
        self._w: Optional[int] = handle
        self.root = root

    @classmethod
    def create(cls, name: str, source: PathLike, *, backend: str = "auto",
               root: Optional[PathLike] = None) -> "Workspace":
        """Make a workspace of ``source``; ``backend``: ``"auto"`` (kernel overlay, then
        fuse-overlayfs, then a copy), ``"kernel"``, ``"fuse"``, ``"copy"``, ``"worktree"``,
        ``"none"``."""
        lib = _L()
        e = N.Error()
        b = ctypes.c_int()
        _check(lib.cordon_backend_from_string(backend.encode(), ctypes.byref(b), ctypes.byref(e)), e)
        out = ctypes.c_void_p()
        r = _fs(root) if root is not None else None
        _check(lib.cordon_workspace_create(r, name.encode(), _fs(os.path.abspath(os.fsdecode(source))), b.value,
                                           ctypes.byref(out), ctypes.byref(e)), e)
        return cls(out.value, os.fsdecode(root) if root is not None else None)

    @classmethod
    def open(cls, name: str, *, root: Optional[PathLike] = None) -> "Workspace":
        """A workspace made earlier, by any process."""
        out = ctypes.c_void_p()
        e = N.Error()
        r = _fs(root) if root is not None else None
        _check(_L().cordon_workspace_open(r, name.encode(), ctypes.byref(out), ctypes.byref(e)), e)
        return cls(out.value, os.fsdecode(root) if root is not None else None)

    def _handle(self) -> int:
        if not self._w:
            raise ValueError("this cordon.Workspace is closed")
        return self._w

    def _str(self, fn: Callable[..., Optional[bytes]]) -> Optional[str]:
        v = fn(self._handle())
        return os.fsdecode(v) if v else None

    @property
    def name(self) -> str:
        return self._str(_L().cordon_workspace_name) or ""

    @property
    def source(self) -> str:
        return self._str(_L().cordon_workspace_source) or ""

    @property
    def backend(self) -> str:
        return N.BACKENDS[_L().cordon_workspace_backend(self._handle())]

    @property
    def dir(self) -> str:
        """The workspace's state directory."""
        return self._str(_L().cordon_workspace_dir) or ""

    @property
    def view(self) -> Optional[str]:
        """Where the view is on the host (``None`` for the kernel backend)."""
        return self._str(_L().cordon_workspace_view)

    @property
    def notes(self) -> Optional[str]:
        """After ``backend="auto"``: why the backends before the chosen one did not work."""
        return self._str(_L().cordon_workspace_notes)

    def run(self, argv: Sequence[PathLike], *, policy: Optional[Policy] = None) -> Result:
        """Run ``argv`` with the workspace's view shown at the source's path (as :func:`run`
        without capture: the command uses this process's stdout and stderr).  The policy
        must not set a workspace of its own."""
        pol, owns = (policy, False) if policy is not None else (Policy(), True)
        try:
            r, e = N.Result(), N.Error()
            rc = _L().cordon_workspace_run(self._handle(), pol._handle(), _argv(argv), ctypes.byref(r), ctypes.byref(e))
            try:
                res = Result._from(r)
            finally:
                _L().cordon_result_free(ctypes.byref(r))
            if rc < 0:
                if res.exit_code in (CORDON_EXIT_NOEXEC, CORDON_EXIT_NOTFOUND):
                    return res._with(error=e.message.decode(errors="replace"))
                raise CordonError._from(e, res)
            return res
        finally:
            if owns:
                pol.close()

    def changes(self) -> list[Change]:
        """The changes against the source as it is now, sorted by path."""
        cl, e = N.ChangeList(), N.Error()
        _check(_L().cordon_workspace_changes(self._handle(), ctypes.byref(cl), ctypes.byref(e)), e)
        try:
            return _changes(cl)
        finally:
            _L().cordon_workspace_change_list_free(ctypes.byref(cl))

    def diff(self, *, name_status: bool = False) -> str:
        """A git-style unified diff of the changes (``git apply`` takes it)."""
        out, e = ctypes.c_void_p(), N.Error()
        _check(_L().cordon_workspace_diff(self._handle(), 1 if name_status else 0, ctypes.byref(out),
                                          ctypes.byref(e)), e)
        try:
            return ctypes.string_at(out.value).decode(errors="surrogateescape") if out.value else ""
        finally:
            _L().cordon_free(out)

    def integrate(self, message: Optional[str] = None, *, force: bool = False) -> Integration:
        """Write the changes into the source (one commit for a git source).

        :raises CordonError: on conflicts (``option`` ``"force"`` for files changed in the
            source meanwhile) or failure; nothing is written then"""
        r, e = N.Integration(), N.Error()
        rc = _L().cordon_workspace_integrate(self._handle(), message.encode() if message else None,
                                             1 if force else 0, ctypes.byref(r), ctypes.byref(e))
        try:
            res = Integration(r.added, r.modified, r.deleted, bool(r.committed),
                              r.commit.decode() or None, r.branch.decode() or None, bool(r.recovered),
                              _changes(r.conflicts), _changes(r.skipped))
        finally:
            _L().cordon_workspace_integration_free(ctypes.byref(r))
        if rc < 0:
            raise CordonError._from(e)
        if rc == 1:
            raise CordonError("workspace", 0, "the merge conflicts in: " +
                              ", ".join(c.path for c in res.conflicts))
        return res

    def status(self) -> WorkspaceStatus:
        st, e = N.WorkspaceState(), N.Error()
        _check(_L().cordon_workspace_status(self._handle(), ctypes.byref(st), ctypes.byref(e)), e)
        return WorkspaceStatus(bool(st.ready), bool(st.mounted), bool(st.pending), bool(st.in_use),
                               st.detail.decode(errors="replace"))

    def restore(self) -> None:
        """Re-establish the backend (fuse: mount again after a reboot)."""
        e = N.Error()
        _check(_L().cordon_workspace_restore(self._handle(), ctypes.byref(e)), e)

    def discard(self) -> None:
        """Delete the workspace: its layers and state (the source is untouched)."""
        name = self.name
        self.close()
        e = N.Error()
        _check(_L().cordon_workspace_remove(_fs(self.root) if self.root else None, name.encode(), ctypes.byref(e)), e)

    def close(self) -> None:
        w, self._w = getattr(self, "_w", None), None
        if w:
            _L().cordon_workspace_free(w)


def workspaces(root: Optional[PathLike] = None) -> list[str]:
    """The names of the workspaces under ``root``, sorted."""
    names = ctypes.POINTER(ctypes.c_char_p)()
    n = ctypes.c_size_t()
    e = N.Error()
    _check(_L().cordon_workspace_list(_fs(root) if root is not None else None, ctypes.byref(names), ctypes.byref(n),
                                      ctypes.byref(e)), e)
    try:
        return [names[i].decode() for i in range(n.value)]
    finally:
        _L().cordon_workspace_names_free(names, n)


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
