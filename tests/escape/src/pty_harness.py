# SPDX-License-Identifier: Apache-2.0
"""Run a command with a pseudo-terminal as its controlling terminal and standard input,
as a person's shell would, then report what was pushed into that terminal's input.

    python3 pty_harness.py INJECTED_FILE COMMAND [ARG...]

The command runs in a new session whose controlling terminal is the pty's slave, on
descriptor 0; descriptors 1 and 2 stay as given. Afterwards the bytes waiting in the
terminal's input queue (raw mode: anything pushed with TIOCSTI) are written to
INJECTED_FILE. Exits with the command's status."""
import fcntl
import os
import pty
import sys
import termios
import tty

out, argv = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
tty.setraw(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    os.dup2(slave, 0)
    os.close(slave)
    os.close(master)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        print(f"pty_harness: cannot run {argv[0]}: {e}", file=sys.stderr)
        os._exit(127)
_, status = os.waitpid(pid, 0)
os.set_blocking(slave, False)
try:
    data = os.read(slave, 4096)
except BlockingIOError:
    data = b""
with open(out, "wb") as f:
    f.write(data)
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
