# SPDX-License-Identifier: Apache-2.0
"""ctypes declarations of libcordon's public API (include/cordon.h), and where the library is found.

Nothing here is public; :mod:`cordon` is the interface.  The structs mirror the header's
0.2 layout and set their ``size`` field, so a later libcordon that appends fields keeps
writing only what this binding knows.  The library is the one installed with the package
(``pip install``: ``cordon/libcordon.so.0`` beside this file), else the system's (``meson
install``, the Debian package); ``$CORDON_LIBRARY``, when set, is taken before both.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path
from typing import Optional

ERROR_MESSAGE_SIZE = 1024

# enum cordon_stage, in order
STAGES = ("none", "usage", "settings", "resolve", "plan", "namespaces", "root", "confine", "exec",
          "supervise", "limits", "workspace")
BACKENDS = ("auto", "kernel", "fuse", "copy", "worktree", "none")

ACCESS_NONE, ACCESS_READ, ACCESS_WRITE = 0, 1, 2
LIMIT_PIDS, LIMIT_MEMORY, LIMIT_CPU = 0, 1, 2
LIMIT_NAMES = ("pids", "memory", "cpu")

SPAWN_STDIN_PIPE = 0x1
SPAWN_STDOUT_PIPE = 0x2
SPAWN_STDERR_PIPE = 0x4
SPAWN_MERGE_STDERR = 0x8
SPAWN_STDIN_INHERIT = 0x10
SPAWN_PTY = 0x20


class Error(ctypes.Structure):
    """struct cordon_error"""

    _fields_ = [
        ("size", ctypes.c_uint),
        ("stage", ctypes.c_int),
        ("errnum", ctypes.c_int),
        ("truncated", ctypes.c_bool),
        ("option", ctypes.c_char * 32),
        ("message", ctypes.c_char * ERROR_MESSAGE_SIZE),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(Error)


class Result(ctypes.Structure):
    """struct cordon_result"""

    _fields_ = [
        ("size", ctypes.c_uint),
        ("exit_code", ctypes.c_int),
        ("status_code", ctypes.c_int),
        ("signal", ctypes.c_int),
        ("timed_out", ctypes.c_bool),
        ("started", ctypes.c_bool),
        ("limits", ctypes.c_char_p),
        ("limits_hit", ctypes.c_uint),
        ("isolation", ctypes.c_int),
        ("isolation_why", ctypes.c_char_p),
        ("refused", ctypes.c_ulong),
        ("n_refusals", ctypes.c_uint),
        ("refusals", ctypes.c_void_p),  # NUL-separated, the library's (cordon_result_free)
        ("wall_seconds", ctypes.c_double),
        ("network_counted", ctypes.c_bool),
        ("network_allowed", ctypes.c_uint),
        ("network_refused", ctypes.c_uint),
        ("network_failed", ctypes.c_uint),
        ("n_network_refusals", ctypes.c_uint),
        ("network_refusals_more", ctypes.c_uint),
        ("network_refusals", ctypes.c_void_p),
        ("pid", ctypes.c_int),
        ("proc_kept", ctypes.c_char_p),  # a static sentence when the container's /proc was kept
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(Result)


class Cmd(ctypes.Structure):
    """struct cordon_cmd"""

    _fields_ = [
        ("size", ctypes.c_uint),
        ("cwd", ctypes.c_char_p),
        ("env", ctypes.POINTER(ctypes.c_char_p)),
        ("timeout", ctypes.c_double),
        ("keep", ctypes.c_bool),
        ("tty", ctypes.c_bool),
        ("detach", ctypes.c_bool),
        ("has_timeout", ctypes.c_bool),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(Cmd)


class Change(ctypes.Structure):
    """struct cordon_workspace_change"""

    _fields_ = [("status", ctypes.c_char), ("path", ctypes.c_char_p)]


class ChangeList(ctypes.Structure):
    """struct cordon_workspace_change_list"""

    _fields_ = [("v", ctypes.POINTER(Change)), ("n", ctypes.c_size_t)]


class Integration(ctypes.Structure):
    """struct cordon_workspace_integration"""

    _fields_ = [
        ("size", ctypes.c_uint),
        ("added", ctypes.c_size_t),
        ("modified", ctypes.c_size_t),
        ("deleted", ctypes.c_size_t),
        ("committed", ctypes.c_bool),
        ("commit", ctypes.c_char * 65),
        ("branch", ctypes.c_char * 256),
        ("recovered", ctypes.c_bool),
        ("conflicts", ChangeList),
        ("skipped", ChangeList),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(Integration)


class WorkspaceState(ctypes.Structure):
    """struct cordon_workspace_state"""

    _fields_ = [
        ("size", ctypes.c_uint),
        ("ready", ctypes.c_bool),
        ("mounted", ctypes.c_bool),
        ("pending", ctypes.c_bool),
        ("in_use", ctypes.c_bool),
        ("detail", ctypes.c_char * 512),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(WorkspaceState)


OUTPUT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t, ctypes.c_void_p)
WARNING_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)

_P = ctypes.c_void_p  # cordon_policy *, cordon_proc *
_E = ctypes.POINTER(Error)
_R = ctypes.POINTER(Result)
_S = ctypes.c_char_p
_I = ctypes.c_int
_B = ctypes.c_bool
_U = ctypes.c_uint
_V = ctypes.c_void_p
_PV = ctypes.POINTER(ctypes.c_void_p)
_ARGV = ctypes.POINTER(ctypes.c_char_p)
_CMD = ctypes.POINTER(Cmd)

# name: (restype, argtypes)
_PROTOTYPES = {
    "cordon_version": (_S, []),
    "cordon_stage_name": (_S, [_I]),
    "cordon_error_text": (_I, [_E, ctypes.c_char_p, ctypes.c_size_t]),
    "cordon_policy_new": (_P, []),
    "cordon_policy_free": (None, [_P]),
    "cordon_base_from_string": (_I, [_S, ctypes.POINTER(_I), _E]),
    "cordon_network_from_string": (_I, [_S, ctypes.POINTER(_I), _E]),
    "cordon_isolation_from_string": (_I, [_S, ctypes.POINTER(_I), _E]),
    "cordon_isolation_name": (_S, [_I]),
    "cordon_policy_set_isolation": (_I, [_P, _I, _E]),
    "cordon_policy_set_base": (_I, [_P, _I, _E]),
    "cordon_policy_add_path": (_I, [_P, _S, _I, _S, _E]),
    "cordon_policy_set_workspace": (_I, [_P, _S, _E]),
    "cordon_policy_set_data_root": (_I, [_P, _S, _E]),
    "cordon_policy_set_read_only": (_I, [_P, _B, _E]),
    "cordon_policy_set_network": (_I, [_P, _I, _E]),
    "cordon_policy_add_env": (_I, [_P, _S, _E]),
    "cordon_policy_add_keep_env": (_I, [_P, _S, _E]),
    "cordon_policy_set_clear_env": (_I, [_P, _B, _E]),
    "cordon_policy_set_cwd": (_I, [_P, _S, _E]),
    "cordon_policy_set_timeout": (_I, [_P, ctypes.c_double, _E]),
    "cordon_policy_set_proc": (_I, [_P, _B, _E]),
    "cordon_policy_set_nested": (_I, [_P, _B, _E]),
    "cordon_policy_set_toolchains": (_I, [_P, _B, _E]),
    "cordon_policy_add_protected": (_I, [_P, _S, _E]),
    "cordon_policy_add_allowed_socket": (_I, [_P, _S, _E]),
    "cordon_policy_add_tmpfs": (_I, [_P, _S, ctypes.c_uint, ctypes.c_ulonglong, _E]),
    "cordon_policy_set_protections": (_I, [_P, _B, _E]),
    "cordon_policy_add_symlink": (_I, [_P, _S, _S, _E]),
    "cordon_policy_set_limit": (_I, [_P, _I, ctypes.c_ulonglong, _E]),
    "cordon_policy_set_limit_string": (_I, [_P, _I, _S, _E]),
    "cordon_policy_add_deny_glob": (_I, [_P, _S, _S, _E]),
    "cordon_policy_set_glob_depth": (_I, [_P, _I, _E]),
    "cordon_policy_load_settings": (_I, [_P, _S, _E]),
    "cordon_policy_set_strict_settings": (_I, [_P, _B, _E]),
    "cordon_policy_settings_enabled": (_I, [_P]),
    "cordon_run": (_I, [_P, ctypes.POINTER(ctypes.c_char_p), _R, _E]),
    "cordon_run_output": (_I, [_P, ctypes.POINTER(ctypes.c_char_p), OUTPUT_FN, ctypes.c_void_p, _R, _E]),
    "cordon_spawn": (_I, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_uint, ctypes.POINTER(_P), _E]),
    "cordon_proc_stdin": (_I, [_P]),
    "cordon_proc_stdout": (_I, [_P]),
    "cordon_proc_stderr": (_I, [_P]),
    "cordon_proc_pty": (_I, [_P]),
    "cordon_proc_close_stdin": (_I, [_P, _E]),
    "cordon_proc_exit_fd": (_I, [_P]),
    "cordon_proc_kill": (_I, [_P, _I, _E]),
    "cordon_result_free": (None, [_R]),
    "cordon_proc_wait": (_I, [_P, _I, _R, _E]),
    "cordon_proc_free": (None, [_P]),
    "cordon_check": (_I, [ctypes.POINTER(ctypes.c_void_p), _E]),
    "cordon_free": (None, [ctypes.c_void_p]),
    # 0.2
    "cordon_spawn_cmd": (_I, [_P, _ARGV, _U, _CMD, _PV, _E]),
    "cordon_explain": (_I, [_P, _ARGV, _U, _PV, _E]),
    "cordon_policy_set_private_dirs": (_I, [_P, _B, _E]),
    "cordon_policy_set_inherit_pid_namespace": (_I, [_P, _B, _E]),
    "cordon_policy_add_hidden": (_I, [_P, _S, _E]),
    "cordon_policy_add_allowed_domain": (_I, [_P, _S, _E]),
    "cordon_policy_add_denied_domain": (_I, [_P, _S, _E]),
    "cordon_policy_add_host": (_I, [_P, _S, _E]),
    "cordon_policy_add_dns_server": (_I, [_P, _S, _E]),
    "cordon_policy_set_allow_unix_sockets": (_I, [_P, _B, _E]),
    "cordon_policy_add_forwarded_port_string": (_I, [_P, _S, _E]),
    "cordon_policy_add_published_port_string": (_I, [_P, _S, _E]),
    "cordon_policy_set_network_log": (_I, [_P, _S, _E]),
    "cordon_session_new": (_I, [_P, _PV, _E]),
    "cordon_session_spawn_cmd": (_I, [_V, _ARGV, _U, _CMD, _PV, _E]),
    "cordon_session_set_idle_timeout": (_I, [_V, ctypes.c_double, _E]),
    "cordon_session_free": (None, [_V]),
    "cordon_session_listen": (_I, [_V, _S, _E]),
    "cordon_policy_set_warning_handler": (_I, [_P, WARNING_FN, _V, _E]),
    "cordon_policy_settings_tty": (_I, [_P]),
    "cordon_policy_settings_status_json": (_S, [_P]),
    "cordon_session_dir": (_I, [ctypes.c_char_p, ctypes.c_size_t, _E]),
    "cordon_session_serve": (_I, [_V, _I, _E]),
    "cordon_session_open": (_I, [_S, _PV, _E]),
    "cordon_session_stop": (_I, [_S, _E]),
    "cordon_session_list": (_I, [_PV, _E]),
    "cordon_backend_from_string": (_I, [_S, ctypes.POINTER(_I), _E]),
    "cordon_backend_name": (_S, [_I]),
    "cordon_workspace_create": (_I, [_S, _S, _S, _I, _PV, _E]),
    "cordon_workspace_open": (_I, [_S, _S, _PV, _E]),
    "cordon_workspace_free": (None, [_V]),
    "cordon_workspace_name": (_S, [_V]),
    "cordon_workspace_source": (_S, [_V]),
    "cordon_workspace_backend": (_I, [_V]),
    "cordon_workspace_dir": (_S, [_V]),
    "cordon_workspace_view": (_S, [_V]),
    "cordon_workspace_notes": (_S, [_V]),
    "cordon_workspace_run": (_I, [_V, _P, _ARGV, _R, _E]),
    "cordon_workspace_changes": (_I, [_V, ctypes.POINTER(ChangeList), _E]),
    "cordon_workspace_change_list_free": (None, [ctypes.POINTER(ChangeList)]),
    "cordon_workspace_diff": (_I, [_V, _U, _PV, _E]),
    "cordon_workspace_integrate": (_I, [_V, _S, _U, ctypes.POINTER(Integration), _E]),
    "cordon_workspace_integration_free": (None, [ctypes.POINTER(Integration)]),
    "cordon_workspace_saved": (_S, [_V]),
    "cordon_workspace_restore": (_I, [_V, _E]),
    "cordon_workspace_status": (_I, [_V, ctypes.POINTER(WorkspaceState), _E]),
    "cordon_workspace_remove": (_I, [_S, _S, _E]),
    "cordon_workspace_list": (_I, [_S, ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)), ctypes.POINTER(ctypes.c_size_t), _E]),
    "cordon_workspace_names_free": (None, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]),
}

# Optional: declared when the library has them (a newer libcordon than the binding knows
# is fine; an older one lacks these).
_OPTIONAL = {
    "cordon_policy_settings_sandboxed": (_I, [_P]),
}


def _candidates() -> list[str]:
    """Where to look, in order: $CORDON_LIBRARY, next to the package, the system."""
    out: list[str] = []
    env = os.environ.get("CORDON_LIBRARY")
    if env:
        out.append(env)
    here = Path(__file__).resolve().parent
    for d in (here, here.parent):
        for name in ("libcordon.so.0", "libcordon.so"):
            p = d / name
            if p.exists():
                out.append(str(p))
    try:  # meson install's libdir (python/cordon/_installed.py.in)
        from ._installed import LIBDIR
        p = Path(LIBDIR) / "libcordon.so.0"
        if p.exists():
            out.append(str(p))
    except ImportError:
        pass
    found = ctypes.util.find_library("cordon")
    if found:
        out.append(found)
    out.append("libcordon.so.0")
    out.append("libcordon.so")
    return out


def load() -> ctypes.CDLL:
    """Load libcordon and declare its functions; raises OSError naming where it looked."""
    tried: list[str] = []
    env = os.environ.get("CORDON_LIBRARY")
    lib: Optional[ctypes.CDLL] = None
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name, use_errno=True)
            break
        except OSError as e:
            tried.append(f"{name} ({e})")
            if env and name == env:
                # an explicit choice that does not load is an error, not a fallback
                raise OSError(f"cordon: CORDON_LIBRARY={env} cannot be loaded: {e}") from e
    if lib is None:
        raise OSError("cordon: libcordon.so not found; set CORDON_LIBRARY to its path, or install it "
                      "(meson install); tried: " + "; ".join(tried))
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    for name, (restype, argtypes) in _OPTIONAL.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes
    return lib
