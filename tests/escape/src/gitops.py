#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Raw calls for the git escape tests (tests/escape/test_git.sh) that the shell has no
command for. Each operation prints "LABEL ok" or "LABEL ERRNONAME" and never stops the
sequence: a refused step is the expected outcome inside cordon, a working one the
positive control outside.

  gitops.py exchange A B           renameat2(A, B, RENAME_EXCHANGE)
  gitops.py whiteout A B           renameat2(A, B, RENAME_WHITEOUT)
  gitops.py bind PATH              bind(AF_UNIX) a socket to PATH (the socket is closed)
  gitops.py reopen TARGET OVER TEXT
      an O_PATH descriptor to TARGET; a user and mount namespace of its own; a tmpfs
      mounted over OVER; then /proc/self/fd/N opened for appending, and TEXT written
"""
import ctypes
import errno
import os
import socket
import sys

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_EXCHANGE = 2
RENAME_WHITEOUT = 4
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000


def report(label, fn):
    try:
        fn()
        print(f"{label} ok", flush=True)
    except OSError as e:
        print(f"{label} {errno.errorcode.get(e.errno, e.errno)}", flush=True)


def check(rc):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def renameat2(a, b, flags):
    libc.syscall.restype = ctypes.c_long
    nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
    check(libc.syscall(nr, AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags))


def bind(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(path)
    finally:
        s.close()


def reopen(target, over, text):
    fd = os.open(target, os.O_PATH)
    uid, gid = os.getuid(), os.getgid()
    check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"0 {gid} 1")
    check(libc.mount(b"none", over.encode(), b"tmpfs", 0, None))
    w = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_APPEND)
    os.write(w, text.encode())
    os.close(w)


def main(argv):
    op = argv[1]
    if op == "exchange":
        report("exchange", lambda: renameat2(argv[2], argv[3], RENAME_EXCHANGE))
    elif op == "whiteout":
        report("whiteout", lambda: renameat2(argv[2], argv[3], RENAME_WHITEOUT))
    elif op == "bind":
        report("bind", lambda: bind(argv[2]))
    elif op == "reopen":
        report("reopen", lambda: reopen(argv[2], argv[3], argv[4]))
    else:
        sys.exit(f"gitops.py: unknown operation {op}")


if __name__ == "__main__":
    main(sys.argv)
