# SPDX-License-Identifier: Apache-2.0
"""Tests of the Python binding (python/cordon) against a real libcordon.

Run by `meson test --suite python` (as root and as uid 65534, tests/meson.build):
``CORDON_LIBRARY=build/libcordon.so PYTHONPATH=python python3 python/tests/test_cordon.py``
(``--tap`` prints TAP).  Every run happens in a real sandbox.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cordon  # noqa: E402


def policy(**kw) -> cordon.Policy:
    """Runs anywhere: no workspace, / as the working directory (nothing made on the host)."""
    kw.setdefault("no_workspace", True)
    kw.setdefault("cwd", "/")
    kw.setdefault("timeout", 60)
    return cordon.Policy(**kw)


def marked(marker: str) -> int:
    """Processes on the host whose command line holds ``marker``."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if marker.encode() in f.read().replace(b"\0", b" "):
                    n += 1
        except OSError:
            pass
    return n


def wait_until(pred, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


class Basics(unittest.TestCase):
    def test_version_and_check(self) -> None:
        self.assertRegex(cordon.version(), r"^\d+\.\d+")
        doc = cordon.check()
        self.assertIn("default_sandbox", doc)
        self.assertIn("user_namespaces", doc["checks"])
        self.assertIsInstance(doc["checks"]["user_namespaces"]["ok"], bool)

    def test_bad_policy_values_raise(self) -> None:
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Policy(allow=["relative/path"])
        self.assertEqual(cm.exception.stage, "usage")
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Policy(network="everywhere")
        self.assertEqual(cm.exception.stage, "usage")
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Policy(timeout=-3)
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Policy(settings="/nonexistent/cordon.json")
        self.assertEqual(cm.exception.stage, "settings")
        self.assertEqual(cm.exception.errno, 2)
        self.assertIn("/nonexistent/cordon.json", str(cm.exception))
        self.assertIn("No such file", str(cm.exception))
        self.assertNotIn("No such file", cm.exception.message)

    def test_settings_enabled(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"sandbox": {"enabled": false}}')
        try:
            p = policy(settings=f.name)
            self.assertIs(p.settings_enabled, False)
            with self.assertRaises(cordon.CordonError) as cm:
                cordon.run(["true"], policy=p)
            self.assertEqual(cm.exception.stage, "settings")
            self.assertIsNone(policy().settings_enabled)
        finally:
            os.unlink(f.name)

    def test_strict_settings(self) -> None:
        # a misspelt "sandbox" drops its rules: a warning by default, refused when strict
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"sanbox": {"deniedPaths": ["/x"]}, "model": "m"}')
        try:
            policy(settings=f.name)
            with self.assertRaises(cordon.CordonError) as cm:
                policy(settings=f.name, strict_settings=True)
            self.assertEqual(cm.exception.stage, "settings")
            self.assertIn('did you mean "sandbox"?', cm.exception.message)
        finally:
            os.unlink(f.name)

    def test_closed_objects(self) -> None:
        p = policy()
        p.close()
        with self.assertRaises(ValueError):
            cordon.run(["true"], policy=p)
        c = cordon.spawn(["true"], policy=policy())
        c.close()
        c.close()  # idempotent
        with self.assertRaises(ValueError):
            c.wait()
        with self.assertRaises(ValueError):
            c.kill()

    def test_bad_argv(self) -> None:
        with self.assertRaises(TypeError):
            cordon.run("echo hi", policy=policy())  # a string is not an argv
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.run([], policy=policy())
        self.assertEqual(cm.exception.stage, "usage")
        with self.assertRaises(cordon.CordonError):
            cordon.spawn([""], policy=policy())
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.spawn(["true"], policy=policy(), stdout=None, merge_stderr=True)
        self.assertIn("MERGE", str(cm.exception))


class PolicyChecks(unittest.TestCase):
    def test_a_bad_cwd_is_refused_when_built(self) -> None:
        with tempfile.TemporaryDirectory() as ws:
            cordon.Policy(workspace=ws, cwd=ws)  # the control: an existing one
            for bad in ("/nonexistent-cordon-dir", "missing-below-the-workspace"):
                with self.assertRaises(cordon.CordonError) as cm:
                    cordon.Policy(workspace=ws, cwd=bad)
                self.assertEqual((cm.exception.stage, cm.exception.option), ("usage", "cwd"))

    def test_warnings_reach_the_harness(self) -> None:
        got: list = []
        p = policy(allow=["/nonexistent-cordon-path"], on_warning=got.append)
        self.assertEqual(cordon.run(["true"], policy=p).exit_code, 0)
        self.assertTrue(any("/nonexistent-cordon-path" in m for m in got), got)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cordon.run(["true"], policy=policy(allow=["/nonexistent-cordon-path"]))
            cordon.run(["true"], policy=policy())  # the control: no warning
        self.assertEqual([x.category for x in w], [cordon.CordonWarning])
        quiet: list = []
        cordon.run(["true"], policy=policy(allow=["/usr"], on_warning=quiet.append))
        self.assertEqual(quiet, [])



class Run(unittest.TestCase):
    def test_allow_socket(self) -> None:
        # a host service's Unix socket the view shows: refused (EACCES) unless named
        d = tempfile.mkdtemp()
        os.chmod(d, 0o755)
        path = os.path.join(d, "host.sock")
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
        os.chmod(path, 0o777)
        srv.listen(4)
        client = ("import errno, socket, sys\n"
                  "c = socket.socket(socket.AF_UNIX)\n"
                  "try:\n    c.connect(sys.argv[1])\nexcept OSError as e:\n    sys.exit(e.errno)\n")
        try:
            with self.assertRaises(cordon.CordonError):
                cordon.Policy(allow_socket=["relative.sock"])
            r = cordon.run([sys.executable, "-c", client, path], policy=policy(allow_ro=[d]))
            self.assertEqual(r.exit_code, errno.EACCES)
            r = cordon.run([sys.executable, "-c", client, path], policy=policy(allow_ro=[d], allow_socket=[path]))
            self.assertEqual(r.exit_code, 0)
        finally:
            srv.close()
            os.unlink(path)
            os.rmdir(d)

    def test_exit_codes(self) -> None:
        p = policy()
        self.assertEqual(cordon.run(["true"], policy=p).exit_code, 0)
        r = cordon.run(["sh", "-c", "exit 7"], policy=p)
        self.assertEqual((r.exit_code, r.status, r.signal, r.started), (7, 7, None, True))
        r = cordon.run(["sh", "-c", "kill -TERM $$"], policy=p)
        self.assertEqual((r.exit_code, r.status, r.signal), (128 + 15, None, 15))
        self.assertEqual(r.isolation, "namespaces")
        self.assertGreater(r.wall_seconds, 0)

    def test_tmpfs(self) -> None:
        p = policy(base="host").tmpfs("/usr/share/doc", 0o700, size=1 << 20)
        out = []
        r = cordon.run(["sh", "-c", "stat -c %a /usr/share/doc; ls -A /usr/share/doc; touch /usr/share/doc/x; "
                        "df -B1 --output=size /usr/share/doc | tail -1"], policy=p,
                       on_output=lambda b: out.append(b) and False)
        self.assertEqual((r.exit_code, b"".join(out).split()), (0, [b"700", b"1048576"]))
        with self.assertRaises(cordon.CordonError):
            policy().tmpfs("relative", 0o755)

    def test_symlink(self) -> None:
        out = []
        r = cordon.run(["readlink", "/tmp/l"], policy=policy().symlink("/tmp/l", "some/where"),
                       on_output=lambda b: out.append(b) and False)
        self.assertEqual((r.exit_code, b"".join(out)), (0, b"some/where\n"))

    def test_protections_off(self) -> None:
        # a new .codex in a writable directory: refused by the creation control with them
        # (the default), made without them (bubblewrap's exact mode)
        d = tempfile.mkdtemp(dir="/var/tmp")
        os.chmod(d, 0o777)
        made = os.path.join(d, ".codex")
        try:
            for on in (True, False):
                p = policy(base="host", allow=[d])
                if not on:
                    p.protections(False)
                r = cordon.run(["mkdir", made], policy=p)
                self.assertEqual((r.exit_code == 0, os.path.isdir(made)), (not on, not on), f"protections {on}")
        finally:
            if os.path.isdir(made):
                os.rmdir(made)
            os.rmdir(d)

    def test_not_found_and_not_executable_are_results(self) -> None:
        """As a shell reports them: 127 and 126 with the reason, not an exception."""
        r = cordon.run(["cordon-no-such-command"], policy=policy())
        self.assertEqual(r.exit_code, 127)
        self.assertFalse(r.started)
        self.assertIn("cordon-no-such-command", r.error or "")
        with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
            f = Path(d, "script")
            f.write_text("#!/bin/sh\necho hi\n")
            f.chmod(0o644)
            r = cordon.run([str(f)], policy=policy(allow_ro=[d]))
            self.assertEqual(r.exit_code, 126)
            self.assertIsNotNone(r.error)
            f.chmod(0o755)  # positive control: the same file, executable, runs
            r = cordon.run([str(f)], policy=policy(allow_ro=[d]), capture=True)
            self.assertEqual((r.exit_code, r.stdout), (0, b"hi\n"))

    def test_on_output_merged_and_streamed(self) -> None:
        chunks: list[tuple[float, bytes]] = []
        t0 = time.monotonic()
        r = cordon.run(["sh", "-c", "echo out; echo err >&2; sleep 1; echo late"], policy=policy(),
                       on_output=lambda b: chunks.append((time.monotonic() - t0, b)))
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(b"".join(c for _, c in chunks), b"out\nerr\nlate\n")
        self.assertLess(chunks[0][0], 0.9)  # delivered as it came, not at the end

    def test_on_output_true_stops(self) -> None:
        marker = f"sleep 100.{os.getpid()}1"
        t0 = time.monotonic()
        r = cordon.run(["sh", "-c", f"{marker} & yes"], policy=policy(), on_output=lambda b: True)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(r.signal, signal.SIGKILL)
        self.assertEqual(marked(marker), 0)

    def test_timeout(self) -> None:
        out: list[bytes] = []
        t0 = time.monotonic()
        r = cordon.run(["sh", "-c", "echo before; sleep 30"], policy=policy(timeout=0.3), on_output=out.append)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.exit_code, 124)
        self.assertEqual(b"".join(out), b"before\n")
        self.assertLess(time.monotonic() - t0, 5)

    def test_env(self) -> None:
        out: list[bytes] = []
        cordon.run(["sh", "-c", "echo $CI"], policy=policy(env={"CI": "1"}), on_output=out.append)
        self.assertEqual(b"".join(out), b"1\n")

    def test_large_output(self) -> None:
        n = [0]

        def count(b: bytes) -> None:
            n[0] += len(b)

        cordon.run(["head", "-c", "20000000", "/dev/zero"], policy=policy(), on_output=count)
        self.assertEqual(n[0], 20000000)

    def test_callback_exception_kills_and_propagates(self) -> None:
        marker = f"sleep 100.{os.getpid()}2"

        def boom(b: bytes) -> None:
            raise RuntimeError("from the callback")

        with self.assertRaises(RuntimeError):
            cordon.run(["sh", "-c", f"echo x; {marker}"], policy=policy(), on_output=boom)
        self.assertTrue(wait_until(lambda: marked(marker) == 0))

    def test_keyboard_interrupt_kills_the_sandbox(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            self.skipTest("signals are delivered to the main thread only")
        marker = f"sleep 100.{os.getpid()}3"
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        t0 = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            cordon.run(["sh", "-c", marker], policy=policy())
        self.assertLess(time.monotonic() - t0, 3)
        self.assertTrue(wait_until(lambda: marked(marker) == 0))

    def test_threads(self) -> None:
        p = policy()
        results: dict[int, bytes] = {}

        def one(i: int) -> None:
            out: list[bytes] = []
            cordon.run(["sh", "-c", f"echo {i}"], policy=p, on_output=out.append)
            results[i] = b"".join(out)

        ts = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(results, {i: f"{i}\n".encode() for i in range(16)})

    def test_no_signal_handler_changed(self) -> None:
        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGCHLD, signal.SIGPIPE, signal.SIGTERM)}
        cordon.run(["true"], policy=policy())
        with cordon.spawn(["true"], policy=policy()) as c:
            c.wait()
        after = {s: signal.getsignal(s) for s in before}
        self.assertEqual(before, after)


class Spawn(unittest.TestCase):
    def test_cat(self) -> None:
        with cordon.spawn(["cat"], policy=policy()) as c:
            c.stdin.write(b"hi\n")
            c.stdin.close()
            self.assertEqual(c.stdout.read(), b"hi\n")
            r = c.wait(timeout=5)
            self.assertEqual(r.exit_code, 0)
            self.assertIs(c.wait(), r)  # the same result every time

    def test_streams(self) -> None:
        with cordon.spawn(["sh", "-c", "echo o; echo e >&2"], policy=policy(), stdin=None) as c:
            self.assertIsNone(c.stdin)
            self.assertEqual(c.stdout.read(), b"o\n")
            self.assertEqual(c.stderr.read(), b"e\n")
        with cordon.spawn(["sh", "-c", "echo o; echo e >&2"], policy=policy(), merge_stderr=True) as c:
            self.assertIsNone(c.stderr)
            self.assertEqual(c.stdout.read(), b"o\ne\n")
        with cordon.spawn(["sh", "-c", "cat; echo eof"], policy=policy(), stdin=cordon.DEVNULL) as c:
            self.assertEqual(c.stdout.read(), b"eof\n")

    def test_pty(self) -> None:
        """A terminal of the sandbox's own: an interactive program driven through its master."""
        import fcntl, struct, termios
        with cordon.spawn(["sh", "-c", "stty size; read l; echo \"got $l\"; exec 3</dev/tty && echo ctty"],
                          policy=policy(), pty=True) as c:
            self.assertIsNone(c.stdin)
            self.assertIsNone(c.stdout)
            c.pty.write(b"typed\n")
            out = b""
            while True:
                try:
                    chunk = c.pty.read(4096)
                except OSError:  # EIO: every process inside has closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            self.assertIn(b"24 80\r\n", out)
            self.assertIn(b"got typed\r\nctty\r\n", out)
            self.assertEqual(c.wait(timeout=10).exit_code, 0)
        with cordon.spawn(["sh", "-c", "trap 'stty size; exit 3' WINCH; echo ready; while :; do sleep 0.05; done"],
                          policy=policy(), pty=True) as c:
            self.assertIn(b"ready", c.pty.read(4096))
            fcntl.ioctl(c.pty, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 99, 0, 0))
            self.assertEqual(c.wait(timeout=10).exit_code, 3)

    def test_line_protocol(self) -> None:
        """A long-lived child driven over stdio, line by line."""
        with cordon.spawn(["sh", "-c", "while read l; do echo \"got $l\"; done"], policy=policy()) as c:
            for i in range(20):
                c.stdin.write(f"{i}\n".encode())
                c.stdin.flush()
                self.assertEqual(c.stdout.readline(), f"got {i}\n".encode())
            c.stdin.close()
            self.assertEqual(c.wait(timeout=5).exit_code, 0)

    def test_wait_timeout_then_kill(self) -> None:
        with cordon.spawn(["sleep", "30"], policy=policy()) as c:
            t0 = time.monotonic()
            with self.assertRaises(TimeoutError):
                c.wait(timeout=0.2)
            self.assertLess(time.monotonic() - t0, 2)
            self.assertIsNone(c.poll())
            c.kill(signal.SIGTERM)
            r = c.wait(timeout=5)
            self.assertEqual(r.signal, signal.SIGTERM)
            c.kill()  # ended: nothing to do, no error

    def test_kill_refuses_other_signals(self) -> None:
        with cordon.spawn(["sleep", "30"], policy=policy()) as c:
            with self.assertRaises(OSError):
                c.kill(signal.SIGSTOP)

    def test_with_block_kills_what_runs(self) -> None:
        marker = f"sleep 100.{os.getpid()}4"
        with cordon.spawn(["sh", "-c", marker], policy=policy()) as c:
            self.assertTrue(wait_until(lambda: marked(marker) >= 1))
        self.assertEqual(marked(marker), 0)
        self.assertIsNone(c._c)

    def test_exit_fd(self) -> None:
        import select
        with cordon.spawn(["sleep", "0.2"], policy=policy(), stdin=None, stdout=None, stderr=None) as c:
            self.assertEqual(select.select([c.exit_fd], [], [], 0)[0], [])
            self.assertEqual(select.select([c.exit_fd], [], [], 5)[0], [c.exit_fd])
            self.assertEqual(c.wait().exit_code, 0)

    def test_setup_failure_raises(self) -> None:
        """A sandbox that cannot be set up (a working directory that is not there inside)
        raises, at spawn or at wait, with the result's 125."""
        with self.assertRaises(cordon.CordonError) as cm:
            with cordon.spawn(["true"], policy=policy(), cwd="/cordon-no-such-dir") as c:
                c.wait()
        if cm.exception.result is not None:
            self.assertEqual(cm.exception.result.exit_code, 125)


class Layout(unittest.TestCase):
    def test_structs_are_written_within_their_size(self) -> None:
        """The binding's structs are the header's: the library writes them whole and not a
        byte beyond (a mismatch shows as a clobbered canary or a garbage field)."""
        import ctypes
        from cordon import _native as N

        class Guarded(ctypes.Structure):
            _fields_ = [("r", N.Result), ("canary", ctypes.c_ubyte * 64)]

        class GuardedError(ctypes.Structure):
            _fields_ = [("e", N.Error), ("canary", ctypes.c_ubyte * 64)]

        g, ge = Guarded(), GuardedError()
        ctypes.memset(ctypes.byref(g), 0xAB, ctypes.sizeof(g))
        ctypes.memset(ctypes.byref(ge), 0xAB, ctypes.sizeof(ge))
        g.r.size, ge.e.size = ctypes.sizeof(N.Result), ctypes.sizeof(N.Error)
        p = policy()
        lib = cordon._L()
        argv = (ctypes.c_char_p * 4)(b"sh", b"-c", b"exit 3", None)
        self.assertEqual(lib.cordon_run(p._handle(), argv, ctypes.byref(g.r), ctypes.byref(ge.e)), 0)
        self.assertEqual((g.r.exit_code, g.r.status_code, g.r.signal), (3, 3, 0))
        self.assertGreater(g.r.wall_seconds, 0)
        self.assertLess(g.r.wall_seconds, 60)
        self.assertEqual(list(g.canary), [0xAB] * 64)
        self.assertEqual(lib.cordon_policy_load_settings(p._handle(), b"/nonexistent/x.json", ctypes.byref(ge.e)), -1)
        self.assertEqual(ge.e.errnum, 2)
        self.assertIn(b"/nonexistent/x.json", ge.e.message)
        self.assertEqual(list(ge.canary), [0xAB] * 64)


class PerCall(unittest.TestCase):
    """What a bash tool needs per call, over one Policy that stays as it was."""

    def test_cwd_env_timeout_of_the_call(self) -> None:
        p = policy(env={"FROM_POLICY": "p"})
        r = cordon.run(["sh", "-c", 'echo "$PWD $FROM_CALL $FROM_POLICY"'], policy=p, capture=True,
                       cwd="/usr", env={"FROM_CALL": "c", "FROM_POLICY": "o"})
        self.assertEqual(r.stdout, b"/usr c o\n")
        # the policy is unchanged (the control)
        r = cordon.run(["sh", "-c", 'echo "$PWD ${FROM_CALL-unset} $FROM_POLICY"'], policy=p, capture=True)
        self.assertEqual(r.stdout, b"/ unset p\n")
        r = cordon.run(["sleep", "30"], policy=p, timeout=0.3)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.exit_code, 124)

    def test_cwd_defaults_to_the_workspace_and_relative_is_in_it(self) -> None:
        with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
            os.mkdir(os.path.join(d, "sub"))
            p = cordon.Policy(workspace=d, timeout=60)
            self.assertEqual(cordon.run(["pwd"], policy=p, capture=True).stdout, (d + "\n").encode())
            self.assertEqual(cordon.run(["pwd"], policy=p, capture=True, cwd="sub").stdout, (d + "/sub\n").encode())

    def test_bad_workspace_refused_when_the_policy_is_built(self) -> None:
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Policy(workspace="/cordon-no-such-dir")
        self.assertEqual(cm.exception.option, "workspace")
        with self.assertRaises(cordon.CordonError) as cm:
            cordon.Policy(allow_domain=["not a domain!"])
        self.assertEqual(cm.exception.stage, "usage")

    def test_stdout_and_stderr_apart_or_merged_and_input(self) -> None:
        argv = ["sh", "-c", "cat; echo err >&2"]
        r = cordon.run(argv, policy=policy(), capture=True, merge_stderr=False, input=b"in\n")
        self.assertEqual((r.stdout, r.stderr), (b"in\n", b"err\n"))
        r = cordon.run(argv, policy=policy(), capture=True, input=b"in\n")
        self.assertEqual((r.stdout, r.stderr), (b"in\nerr\n", None))

    def test_cancel_from_another_thread(self) -> None:
        stop = cordon.Cancel()
        threading.Timer(0.3, stop.cancel).start()
        t0 = time.monotonic()
        r = cordon.run(["sleep", "30"], policy=policy(), cancel=stop)
        self.assertEqual(r.signal, signal.SIGKILL)
        self.assertLess(time.monotonic() - t0, 20)
        r = cordon.run(["true"], policy=policy(), cancel=stop)  # cancelled already: killed at once
        self.assertTrue(r.signal == signal.SIGKILL or r.exit_code == 0)

    def test_explain(self) -> None:
        self.assertIn("plan", cordon.explain(["true"], policy=policy(), json_output=True))
        self.assertIn("base", cordon.explain(["true"], policy=policy()))


class Sessions(unittest.TestCase):
    def test_session_commands(self) -> None:
        with cordon.Session(policy()) as s:
            r = s.run(["sh", "-c", "echo $PWD $X; echo e >&2; echo kept > /tmp/f"], cwd="/usr", env={"X": "1"})
            self.assertEqual((r.exit_code, r.stdout), (0, b"/usr 1\ne\n"))
            self.assertEqual(s.run(["cat", "/tmp/f"]).stdout, b"kept\n")  # one sandbox: /tmp shared
            self.assertTrue(s.run(["sleep", "30"], timeout=0.3).timed_out)
            self.assertEqual(s.run(["cordon-no-such-command"]).exit_code, 127)
            stop = cordon.Cancel()
            threading.Timer(0.3, stop.cancel).start()
            self.assertEqual(s.run(["sleep", "30"], cancel=stop).signal, signal.SIGKILL)
            with s.spawn(["sh", "-c", "tty"], tty=True, stdin=None, stdout=None, stderr=None) as c:
                self.assertIsNotNone(c.pty)
                out = b""
                try:
                    while True:
                        b = os.read(c.pty.fileno(), 4096)
                        if not b:
                            break
                        out += b
                except OSError:
                    pass
                c.wait()
            self.assertIn(b"/dev/pts/", out)

    def test_published_session_open_list_and_stop(self) -> None:
        """A session `cordon session start` published: opened, listed, stopped from Python."""
        cli = Path(os.environ.get("CORDON_LIBRARY", "")).parent / "cordon"
        if not cli.is_file():
            self.skipTest(f"no cordon binary beside $CORDON_LIBRARY ({cli})")
        name = f"pytest{os.getpid()}"
        subprocess.run([str(cli), "session", "start", name, "--no-workspace", "--chdir", "/", "--idle-timeout", "5m"],
                       check=True, cwd="/")
        try:
            self.assertIn(name, [x["name"] for x in cordon.sessions()])
            with cordon.Session.open(name) as o:
                self.assertEqual(o.run(["echo", "hi"]).stdout, b"hi\n")
        finally:
            cordon.stop_session(name)
        self.assertNotIn(name, [x["name"] for x in cordon.sessions()])

    def test_tty_in_run_and_session_run(self) -> None:
        """tty=True: a terminal of its own, its output as stdout; without it, none (the control)."""
        cmd = ["sh", "-c", "test -t 1 && echo tty || echo notty"]
        self.assertEqual(cordon.run(cmd, policy=policy(), capture=True).stdout, b"notty\n")
        self.assertEqual(cordon.run(cmd, policy=policy(), capture=True, tty=True).stdout, b"tty\r\n")
        with cordon.Session(policy()) as s:
            self.assertEqual(s.run(cmd).stdout, b"notty\n")
            r = s.run(cmd, tty=True)
            self.assertEqual((r.exit_code, r.stdout), (0, b"tty\r\n"))
            with self.assertRaises(ValueError):
                s.run(cmd, tty=True, input=b"x")

    def test_serve_a_published_session(self) -> None:
        """listen + serve: commands from the command line start in this process's session;
        sessions() lists it while served, stop_session() ends serve() with 0."""
        cli = Path(os.environ.get("CORDON_LIBRARY", "")).parent / "cordon"
        if not cli.is_file():
            self.skipTest(f"no cordon binary beside $CORDON_LIBRARY ({cli})")
        name = f"pyserve{os.getpid()}"
        s = cordon.Session(policy())
        s.listen(name)
        rc: list = []

        def serve() -> None:
            rc.append(s.serve())
            s.close()  # from the serving thread: stop_session() waits for the end
        t = threading.Thread(target=serve)
        t.start()
        try:
            self.assertIn(name, [x["name"] for x in cordon.sessions()])
            s.run(["sh", "-c", "echo mine > /tmp/mark"])
            out = subprocess.run([str(cli), "session", "exec", name, "--", "cat", "/tmp/mark"], capture_output=True,
                                 timeout=60, cwd="/")
            self.assertEqual((out.returncode, out.stdout), (0, b"mine\n"))  # the same sandbox
        finally:
            cordon.stop_session(name)
            t.join(60)
        self.assertEqual(rc, [0])
        self.assertNotIn(name, [x["name"] for x in cordon.sessions()])
        self.assertTrue(cordon.session_dir().startswith("/"))



class Workspaces(unittest.TestCase):
    def test_create_run_diff_integrate_discard(self) -> None:
        with tempfile.TemporaryDirectory(dir="/var/tmp") as root, tempfile.TemporaryDirectory(dir="/var/tmp") as src:
            Path(src, "a").write_text("1\n")
            w = cordon.Workspace.create("t1", src, backend="copy", root=root)
            self.assertEqual((w.name, w.backend, w.source), ("t1", "copy", src))
            self.assertEqual(cordon.workspaces(root), ["t1"])
            r = w.run(["sh", "-c", "echo 2 > a; echo new > b"], policy=cordon.Policy(timeout=60))
            self.assertEqual(r.exit_code, 0)
            self.assertEqual(Path(src, "a").read_text(), "1\n")  # the source is untouched until integrate
            self.assertEqual(w.changes(), [cordon.Change("M", "a"), cordon.Change("A", "b")])
            self.assertEqual(w.diff(name_status=True), "M\ta\nA\tb\n")
            self.assertIn("+2", w.diff())
            self.assertTrue(w.status().ready)
            i = w.integrate("x")
            self.assertEqual((i.added, i.modified), (1, 1))
            self.assertEqual(Path(src, "a").read_text(), "2\n")
            w.discard()
            self.assertEqual(cordon.workspaces(root), [])


class Asyncio(unittest.TestCase):
    def test_run_stream_session_cancel(self) -> None:
        import asyncio

        import cordon.aio

        async def main() -> None:
            p = policy()
            r = await cordon.aio.run(["sh", "-c", "cat; echo e >&2"], policy=p, input=b"abc", merge_stderr=False)
            self.assertEqual((r.stdout, r.stderr), (b"abc", b"e\n"))
            chunks = []
            async with cordon.aio.spawn(["sh", "-c", "echo 1; sleep 0.2; echo 2"], policy=p) as proc:
                async for c in proc.output():
                    chunks.append(c)
                self.assertEqual((await proc.wait()).exit_code, 0)
            self.assertEqual(b"".join(chunks), b"1\n2\n")
            async with cordon.aio.Session(p) as s:
                rs = await asyncio.gather(*[s.run(["sh", "-c", f"echo {i}"]) for i in range(4)])
                self.assertEqual([x.stdout for x in rs], [b"0\n", b"1\n", b"2\n", b"3\n"])
                marker = f"sleep 100.{os.getpid()}7"
                t = asyncio.create_task(s.run(["sh", "-c", marker]))
                await asyncio.sleep(0.5)
                t.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await t
                self.assertTrue(wait_until(lambda: marked(marker) == 0, 10))

        asyncio.run(main())


class Loading(unittest.TestCase):
    def test_cordon_library_that_does_not_load(self) -> None:
        code = "import cordon\ntry:\n    cordon.version()\nexcept OSError as e:\n    print('OSError', e)\n"
        env = dict(os.environ, CORDON_LIBRARY="/nonexistent/libcordon.so",
                   PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout
        self.assertIn("OSError", out)
        self.assertIn("CORDON_LIBRARY", out)


class _Tap(unittest.TextTestResult):
    """One TAP line per test, for meson test (tests/python.sh)."""

    n = 0

    def _line(self, test, ok: bool, why: str = "") -> None:
        _Tap.n += 1
        name = test.id().split(".", 1)[-1]
        print(f"{'ok' if ok else 'not ok'} {_Tap.n} - {name}{(' # ' + why) if why else ''}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(test, False, self._exc_info_to_string(err, test).strip().splitlines()[-1])

    def addError(self, test, err):
        super().addError(test, err)
        self._line(test, False, self._exc_info_to_string(err, test).strip().splitlines()[-1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(test, True, "SKIP " + reason)


if __name__ == "__main__":
    if "--tap" in sys.argv:
        sys.argv.remove("--tap")
        runner = unittest.TextTestRunner(resultclass=_Tap, stream=open(os.devnull, "w"), verbosity=0)
        suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
        print(f"1..{suite.countTestCases()}", flush=True)
        sys.exit(0 if runner.run(suite).wasSuccessful() else 1)
    unittest.main()
