# SPDX-License-Identifier: Apache-2.0
"""Output through `cordon run --tty` against the same run without it (bench/tty.sh).

    python3 ttybench.py CORDON SIZE ROUNDS

Each round runs `head -c SIZE /dev/zero | base64` in cordon twice, alternately with
--tty and --no-tty, under a terminal as a person's would be (a pty whose master this
process reads as fast as it can, as a terminal emulator does), and then the same two
with stdout on /dev/null.  Prints medians: seconds, MB/s of the command's own output
(SIZE * 4/3 plus its newlines; the terminal adds a CR to each line), and the ratios."""
import os
import pty
import statistics
import subprocess
import sys
import time

cordon, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cmd = ["sh", "-c", f"head -c {size} /dev/zero | base64"]
out_bytes = size * 4 // 3 + size * 4 // 3 // 76  # base64's 76-column lines


def under_terminal(flag):
    """Seconds for `cordon run FLAG -- CMD` on a pty read as fast as possible."""
    t0 = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(cordon, [cordon, "run", flag, "--no-workspace", "--chdir", "/", "--"] + cmd)
    n = 0
    while True:
        try:
            b = os.read(fd, 1 << 20)
        except OSError:
            break
        if not b:
            break
        n += len(b)
    _, st = os.waitpid(pid, 0)
    os.close(fd)
    if os.waitstatus_to_exitcode(st) != 0 or n < out_bytes:
        sys.exit(f"ttybench.py: {flag} under a terminal: status {st}, {n} bytes")
    return time.monotonic() - t0


def to_devnull(flag):
    t0 = time.monotonic()
    with open(os.devnull, "wb") as null:
        subprocess.run([cordon, "run", flag, "--no-workspace", "--chdir", "/", "--"] + cmd, stdout=null,
                       stdin=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0


res = {k: [] for k in ("term_tty", "term_plain", "null_tty", "null_plain")}
for _ in range(rounds):
    res["term_tty"].append(under_terminal("--tty"))
    res["term_plain"].append(under_terminal("--no-tty"))
    res["null_tty"].append(to_devnull("--tty"))
    res["null_plain"].append(to_devnull("--no-tty"))
med = {k: statistics.median(v) for k, v in res.items()}
mb = out_bytes / 1e6
print(f"output: {mb:.0f} MB from `head -c {size} /dev/zero | base64`, {rounds} rounds, medians")
print(f"{'':42} {'s':>8} {'MB/s':>8}")
for k, what in (("term_plain", "under a terminal, --no-tty"), ("term_tty", "under a terminal, --tty (relayed)"),
                ("null_plain", "to /dev/null, --no-tty"), ("null_tty", "to /dev/null, --tty (relayed)")):
    print(f"{what:42} {med[k]:8.2f} {mb / med[k]:8.0f}")
print(f"ratio --tty / --no-tty under a terminal: {med['term_plain'] / med['term_tty']:.2f} (target >= 0.8)")
print(f"ratio --tty / --no-tty to /dev/null:      {med['null_plain'] / med['null_tty']:.2f}")
