#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/layers.sh SOURCE_DIR BUILD_DIR: no new circle between the directories of src/
# (HACKING.md, "The layout, as the data flows": a later stage never reaches back into an
# earlier one).  tests/circles.sh looks at files; this looks at directories: src/A uses
# src/B when an object of A calls a function an object of B defines (nm, within one link
# target, as tests/circles.sh does).  A circle is a set of directories each reaching the
# others (a strongly connected component).  tests/layers-known.txt lists the pairs that
# are allowed to use each other for now ("A <-> B: reason"); a circle that remains once
# those pairs' edges are set aside fails, and so does a listed pair that no longer uses
# each other both ways (the list only shrinks).
#
# TAP: one line per known pair (ok, "# SKIP known"), one per new circle (not ok), and a
# last "ok - no new circle".  Exits 77 when nm or python3 is missing.
set -euo pipefail
src=${1:?usage: tests/layers.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: tests/layers.sh SOURCE_DIR BUILD_DIR}
nm=${NM:-nm}
command -v "$nm" >/dev/null 2>&1 || { echo "1..0 # SKIP $nm not found (binutils)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 77; }
exec python3 - "$src" "$build" "$nm" <<'PY'
import collections, json, os, subprocess, sys

src, build, nm = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
cc = os.path.join(build, "compile_commands.json")
if not os.path.exists(cc):
    print("1..1\nnot ok 1 - %s missing (not a meson build directory?)" % cc)
    sys.exit(1)
objs = []  # (target, directory, object)
for e in json.load(open(cc)):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if not f.startswith(os.path.join(src, "src") + os.sep) or "output" not in e:
        continue
    o = os.path.normpath(os.path.join(e["directory"], e["output"]))
    rel = os.path.relpath(f, os.path.join(src, "src")).split(os.sep)
    if len(rel) < 2 or not os.path.exists(o):
        continue
    objs.append((os.path.dirname(o), rel[0], o))

def syms(obj, *opts):
    out = subprocess.run([nm, "-P", *opts, obj], capture_output=True, text=True, check=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]

defined = {}
for target, d, o in objs:
    for s in syms(o, "-g", "--defined-only"):
        defined[(target, s)] = d
uses = collections.defaultdict(set)  # (A, B) -> symbols
for target, d, o in objs:
    for s in syms(o, "-u"):
        b = defined.get((target, s))
        if b and b != d:
            uses[(d, b)].add(s)

known = {}
path = os.path.join(src, "tests", "layers-known.txt")
bad_lines = []
for line in open(path) if os.path.exists(path) else []:
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    pair, _, reason = line.partition(": ")
    a, sep, b = pair.partition(" <-> ")
    if not sep or not reason:
        bad_lines.append(line)
        continue
    known[tuple(sorted((a, b)))] = reason

edges = collections.defaultdict(set)
for (a, b) in uses:
    if tuple(sorted((a, b))) not in known:
        edges[a].add(b)

# strongly connected components (Tarjan) of what is left
index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        if len(c) > 1:
            comps.append(sorted(c))
for v in sorted({a for a, _ in uses} | {b for _, b in uses}):
    if v not in index:
        visit(v)

lines, failed = [], False
for line in bad_lines:
    lines.append(("not ok", "tests/layers-known.txt: '%s' is not 'A <-> B: reason'" % line))
for (a, b), reason in sorted(known.items()):
    if (a, b) in uses and (b, a) in uses:
        lines.append(("ok", "%s <-> %s # SKIP known: %s" % (a, b, reason)))
    else:
        lines.append(("not ok", "tests/layers-known.txt lists %s <-> %s, which no longer use each other both "
                                 "ways: remove the line" % (a, b)))
for c in comps:
    detail = "; ".join("%s -> %s: %s" % (a, b, ", ".join(sorted(uses[(a, b)])[:4]))
                       for a in c for b in c if b in edges.get(a, ()))
    lines.append(("not ok", "a new circle between src/%s (%s)" % (", src/".join(c), detail)))
if not comps:
    lines.append(("ok", "no new circle between the directories of src/ (%d objects)" % len(objs)))
print("1..%d" % len(lines))
for i, (st, text) in enumerate(lines, 1):
    print("%s %d - %s" % (st, i, text))
    failed |= st == "not ok"
sys.exit(1 if failed else 0)
PY
