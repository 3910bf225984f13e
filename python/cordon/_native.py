"""ctypes declarations of libcordon's public API (include/cordon.h), and where the library is found.

Nothing here is public; :mod:`cordon` is the interface.  The structs mirror the header's
first layout and set their ``size`` field, so a later libcordon that appends fields keeps
writing only what this binding knows.
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
          "supervise", "limits")

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
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(Result)


OUTPUT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t, ctypes.c_void_p)

_P = ctypes.c_void_p  # cordon_policy *, cordon_proc *
_E = ctypes.POINTER(Error)
_R = ctypes.POINTER(Result)
_S = ctypes.c_char_p
_I = ctypes.c_int
_B = ctypes.c_bool

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
        for name in ("libcordon.so", "libcordon.so.0"):
            p = d / name
            if p.exists():
                out.append(str(p))
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
