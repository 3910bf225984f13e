# SPDX-License-Identifier: Apache-2.0
"""A host Unix-socket server for the escape tests: answers "pong-from-host" to every
connection, then closes it.

    python3 unix_server.py ADDR READY_FILE SECONDS

ADDR is a path, or "@name" for an abstract socket. READY_FILE is created once the server
listens. It stops by itself after SECONDS."""
import os
import socket
import sys
import time

addr, ready, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
if not addr.startswith("@"):
    os.chmod(addr, 0o777)
s.listen(16)
open(ready, "w").close()
s.settimeout(0.2)
deadline = time.time() + secs
while time.time() < deadline:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    try:
        c.sendall(b"pong-from-host\n")
    finally:
        c.close()
