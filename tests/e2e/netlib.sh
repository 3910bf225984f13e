# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the network tests (test_bridge.sh, test_proxy.sh), on top of lib.sh: servers
# of the tests' own on the host's loopback, and clients to run inside the sandbox. Every
# server listens on 127.0.0.1 only, stops by itself after a while, and is killed (by pid)
# when its case ends. No test traffic leaves the loopback; no name is ever looked up in
# DNS (the filtering proxy gets its names from --add-host).

# A host loopback server running Python code SERVE(conn) for each connection, in a thread
# each. start_py_server VAR SERVE [SECONDS]: sets $VAR to its port.
start_py_server() {
  local var=$1 serve=$2 secs=${3:-30} portfile=$CT/port.$RANDOM$RANDOM i
  "$PY" -c '
import os, socket, sys, threading, time
exec(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(0.5)
deadline = time.time() + float(sys.argv[2])
def run(c):
    try:
        c.settimeout(20)
        serve(c)
    except Exception:
        pass
    finally:
        c.close()
while time.time() < deadline:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    threading.Thread(target=run, args=(c,), daemon=True).start()
' "$portfile" "$secs" "$serve" </dev/null >/dev/null 2>"$portfile.err" &
  track_pid $! "$portfile"
  for ((i = 0; i < 100; i++)); do
    [ -s "$portfile" ] && break
    sleep 0.05
  done
  [ -s "$portfile" ] || die "could not start a host test server: $(cat "$portfile.err")"
  printf -v "$var" '%s' "$(cat "$portfile")"
}

# A name server of the test's own on 127.0.0.1 (UDP), for --dns-server: alias.x.test is a
# CNAME of svc.x.test, which is 127.0.0.1 (no AAAA record); missing.x.test does not exist;
# broken.x.test gets SERVFAIL; silent.x.test no answer at all. Sets DNS_PORT.
start_dns_server() {
  local portfile=$CT/dns.$RANDOM i
  "$PY" -c '
import os, socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(0.5)
deadline = time.time() + 60
def name_at(m, o):
    labels = []
    while m[o]:
        labels.append(m[o + 1:o + 1 + m[o]].decode())
        o += 1 + m[o]
    return ".".join(labels).lower(), o + 1
def enc(n):
    return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".")) + b"\0"
while time.time() < deadline:
    try:
        m, peer = s.recvfrom(2048)
    except socket.timeout:
        continue
    qid, = struct.unpack("!H", m[:2])
    qname, o = name_at(m, 12)
    qtype, = struct.unpack("!H", m[o:o + 2])
    question = m[12:o + 4]
    answers, rcode = [], 0
    if qname == "silent.x.test":
        continue
    if qname == "missing.x.test":
        rcode = 3
    elif qname == "broken.x.test":
        rcode = 2
    elif qname in ("svc.x.test", "alias.x.test") and qtype == 1:
        owner = b"\xc0\x0c"
        if qname == "alias.x.test":
            target = enc("svc.x.test")
            answers.append(owner + struct.pack("!HHIH", 5, 1, 60, len(target)) + target)
            owner = target
        answers.append(owner + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton("127.0.0.1"))
    head = struct.pack("!HHHHHH", qid, 0x8180 | rcode, 1, len(answers), 0, 0)
    s.sendto(head + question + b"".join(answers), peer)
' "$portfile" </dev/null >/dev/null 2>"$portfile.err" &
  track_pid $! "$portfile"
  for ((i = 0; i < 100; i++)); do
    [ -s "$portfile" ] && break
    sleep 0.05
  done
  [ -s "$portfile" ] || die "could not start the test name server: $(cat "$portfile.err")"
  DNS_PORT=$(cat "$portfile")
}

# An HTTP origin server: answers each request with "ok METHOD TARGET host=HOST" and closes.
HTTP_SERVE='
def serve(c):
    data = b""
    while b"\r\n\r\n" not in data:
        b = c.recv(4096)
        if not b:
            return
        data += b
    head = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    method, target, _ = head[0].split(" ", 2)
    host = ""
    for h in head[1:]:
        k, _, v = h.partition(":")
        if k.strip().lower() == "host":
            host = v.strip()
    body = ("ok %s %s host=%s\n" % (method, target, host)).encode()
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
'

# A stand-in for a host proxy: answers "proxy saw: FIRST LINE" to whatever comes first.
FAKE_PROXY_SERVE='
def serve(c):
    data = c.recv(4096)
    c.sendall(b"proxy saw: " + data.split(b"\n")[0].strip() + b"\n")
'

# Reads until EOF (the client half-closed), then answers "N SHA256" of what it read.
SINK_SERVE='
import hashlib
def serve(c):
    h = hashlib.sha256()
    n = 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.sendall(("%d %s\n" % (n, h.hexdigest())).encode())
'

# Answers "pong" to each connection.
PONG_SERVE='
def serve(c):
    c.sendall(b"pong\n")
'

# Inside: connect to 127.0.0.1:$1, send $2 (if any), print the first line of the answer or
# "error: ..." (exit 3).
CLIENT='
import socket, sys
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    if len(sys.argv) > 2:
        c.sendall(sys.argv[2].encode())
    print(c.makefile().readline().strip() or "empty")
except Exception as e:
    print("error:", type(e).__name__, e)
    sys.exit(3)
'

# Inside: send N bytes of a fixed pseudo-random stream to 127.0.0.1:$1, half-close, print
# the answer; and print the local "N SHA256" for comparison.
SINK_CLIENT='
import hashlib, random, socket, sys
n = int(sys.argv[2])
r = random.Random(7)
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
h = hashlib.sha256()
left = n
while left:
    b = r.randbytes(min(left, 1 << 16))
    c.sendall(b)
    h.update(b)
    left -= len(b)
c.shutdown(socket.SHUT_WR)
print(c.makefile().readline().strip())
print("%d %s" % (n, h.hexdigest()))
'

# json_lines FILE EXPR: evaluate a Python expression over L, the list of JSON objects in FILE.
json_lines() {
  "$PY" -c 'import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(eval(sys.argv[2]))' "$1" "$2"
}
