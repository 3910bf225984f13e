# SPDX-License-Identifier: Apache-2.0
"""Drive a command on a pseudo-terminal, as a person at a terminal would.

    python3 ptyrun.py [--rows R] [--cols C] [--timeout S] STEPS_JSON COMMAND [ARG...]

COMMAND runs in a new session whose controlling terminal, and 0, 1 and 2, is a fresh
pty of R x C (default 24 x 80).  STEPS_JSON is a list of steps, run in order:
  {"expect": TEXT}         wait until the output so far holds TEXT (after the last match)
  {"send": TEXT}           type TEXT (e.g. "\\u0003" is ^C)
  {"sleep": SECONDS}
  {"resize": [ROWS, COLS]} change the window size (the terminal sends SIGWINCH)
  {"signal": NAME}         send signal NAME (e.g. "TERM") to COMMAND's process
  {"close": true}          hang up: close the terminal's master
Then it waits for COMMAND to end and prints one JSON object: "status" (the exit status,
or 128+N for signal N), "output" (everything read, as text), "restored" (the terminal's
settings are what they were before COMMAND ran), "failed" (the step that timed out, or
null).  Exits 0 unless the driver itself failed."""
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

args = sys.argv[1:]
rows, cols, timeout = 24, 80, 20.0
while args and args[0].startswith("--"):
    opt, val = args[0], args[1]
    args = args[2:]
    if opt == "--rows":
        rows = int(val)
    elif opt == "--cols":
        cols = int(val)
    elif opt == "--timeout":
        timeout = float(val)
steps, argv = json.loads(args[0]), args[1:]

master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
before = termios.tcgetattr(slave)
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    if slave > 2:
        os.close(slave)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, f"ptyrun: cannot run {argv[0]}: {e}\n".encode())
        os._exit(127)

out = b""
seen = 0  # where the next "expect" starts looking
closed = False
deadline = time.monotonic() + timeout
failed = None


def pump(wait):
    """Read what the terminal has, waiting up to `wait` seconds for it; True when
    something came.  (The slave stays open here, so the master never reads EIO.)"""
    global out
    if closed:
        time.sleep(wait)
        return False
    r, _, _ = select.select([master], [], [], wait)
    if not r:
        return False
    try:
        b = os.read(master, 65536)
    except OSError:
        return False
    out += b
    return bool(b)


status = None


def ended():
    """Has COMMAND ended? (Reaps it, once, into `status`.)"""
    global status
    if status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(st)
            status = 128 - code if code < 0 else code
    return status is not None


for step in steps:
    if "expect" in step:
        want = step["expect"].encode()
        while want not in out[seen:]:
            if time.monotonic() > deadline or ended():
                pump(0.05)
                if want not in out[seen:]:
                    failed = step
                break
            pump(0.05)
        if failed:
            break
        seen = out.index(want, seen) + len(want)
    elif "send" in step:
        os.write(master, step["send"].encode())
    elif "sleep" in step:
        end = time.monotonic() + step["sleep"]
        while time.monotonic() < end:
            pump(min(0.05, max(0.0, end - time.monotonic())))
    elif "resize" in step:
        r_, c_ = step["resize"]
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", r_, c_, 0, 0))
    elif "signal" in step:
        os.kill(pid, getattr(signal, "SIG" + step["signal"]))
    elif "close" in step:
        os.close(master)
        closed = True

while time.monotonic() < deadline:
    pump(0.02)
    if ended():
        while pump(0.05):
            pass
        break
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    failed = failed or {"timeout": "the command did not end"}
after = termios.tcgetattr(slave)
print(json.dumps({"status": status, "output": out.decode(errors="replace"), "restored": after == before,
                  "failed": failed}))
