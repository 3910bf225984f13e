#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/refs.sh [REPO]: the code's comments cite only files the repository has (HACKING.md,
# "Conventions": comments cite the README, the man page, doc/ or the kernel, never a file
# the repository does not have).  TAP: one line per file whose comments cite files,
# "not ok" once for each citation of a file that does not exist.  tests/meson.build runs it
# (suite lint); it reads whatever tree it finds (git's list of files, or a walk of it).
#
# The comments: /* */ and // in .c and .h files; # in shell, Python and meson files (and in
# the scripts embedded in them); Python's docstrings.  What they must not get wrong:
#   - a path from the top of the repository (src/..., include/..., doc/..., tests/...,
#     bench/..., fuzz/..., python/..., examples/..., debian/..., data/...), a file or a
#     directory, or such a path relative to the citing file's directory (src/NAME.c in
#     tests/escape/lib.sh);
#   - in src/ and include/, a source file by name (`resolve.c`, `policy/glob.h`): some file
#     of the tree ends so, or a meson.build makes it (`output : 'seccomp_bpf.c'`); a name
#     in <angle brackets> is a system header, and one after "git's" (or any "NAME's
#     [own]") is another project's;
#   - a Markdown file by name, and a ../ path to a source or document file, wherever the
#     comment is (a document outside the repository is no citation);
#   - the capitalised name of a project document (README, HACKING and the other usual
#     ones, DOCNAME below), wherever the comment is: a file of that name (README.md) at
#     the top of the tree.
# A path component in capitals (NAME, FILE, HARNESS) is a placeholder, and *, ? and
# {a,b} are globs: some file must match.  Exits non-zero when a citation is wrong.
set -uo pipefail
repo=${1:-$(dirname "${BASH_SOURCE[0]}")/..}
cd "$repo" || { echo "Bail out! refs: cannot enter $repo"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found (./bootstrap.sh installs it)"; exit 0; }
exec python3 - <<'PY'
import fnmatch, os, re, subprocess, sys

TOP = ("src", "include", "doc", "tests", "bench", "fuzz", "python", "examples", "debian", "data")
SCANNED = ("src", "include", "tests", "bench", "fuzz", "python", "examples")

def tree():
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f and os.path.lexists(f)]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, subs, names in os.walk("."):
        subs[:] = [s for s in subs if s != ".git" and not s.startswith("build")]
        files += [os.path.normpath(os.path.join(d, n)) for n in names]
    return files

files = tree()
have = set(files)
for f in files:
    p = os.path.dirname(f)
    while p:
        have.add(p)
        p = os.path.dirname(p)
# what the build makes counts as there (src/confine/seccomp.h cites seccomp_bpf.c)
made = set()
for f in files:
    if os.path.basename(f) == "meson.build":
        try:
            made |= set(re.findall(r"output\s*:\s*\[?\s*'([^'@]+)'", open(f, encoding="utf-8").read()))
        except (OSError, UnicodeDecodeError):
            pass

def c_comments(text):
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            line += text.count("\n", i, j)
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif c in "\"'":
            i += 1
            while i < n and text[i] != c and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1
        else:
            i += 1
    return out

def hash_comments(text, docstrings):
    out = []
    for k, l in enumerate(text.split("\n"), 1):
        if k == 1 and l.startswith("#!"):
            continue
        m = re.search(r"(?:^|[\s;(])#(?![!{#])(.*)$", l)
        if m:
            out.append((k, m.group(1)))
    if docstrings:
        for m in re.finditer(r'"""(.*?)"""', text, re.S):
            out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out

def kind(f, text):
    if f.endswith((".c", ".h")):
        return "c"
    if f.endswith(".py"):
        return "py"
    if f.endswith(".sh") or os.path.basename(f) in ("meson.build", "meson_options.txt") or text.startswith("#!"):
        return "hash"
    return None

PATH = re.compile(r"(?<![\w$/.~@-])(?:\.\./)*[A-Za-z0-9_{},*?][A-Za-z0-9_.{},*?+-]*(?:/[A-Za-z0-9_.{},*?+-]*)*")
DOCNAME = re.compile(r"(?<![\w/.-])(README|HACKING|CONTRACT|STYLE|CONTRIBUTING|CHANGELOG|NEWS|DESIGN|ARCHITECTURE|AUTHORS)(?![\w/.-])")
top_docs = {os.path.splitext(f)[0] for f in files if "/" not in f}
SRCNAME = re.compile(r"^(?:[a-z0-9_]+/)*[a-z0-9_]+\.[ch]$")
DOCS = (".md", ".c", ".h", ".sh", ".py", ".1")

def expand(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    return [q for alt in m.group(1).split(",") for q in expand(p[:m.start()] + alt + p[m.end():])]

def pattern(p):
    parts = [("*" + re.sub(r"^[A-Z][A-Z0-9_]*", "", c) if re.match(r"^[A-Z][A-Z0-9_]*(\.|$)", c) and not c.endswith(".md") else c)
             for c in p.split("/")]
    return "/".join(parts)

def exists(p, base=""):
    p = os.path.normpath(os.path.join(base, p)) if base else p
    if p.startswith("../") or p == "..":
        return False
    pats = [pattern(q) for q in expand(p)]
    for q in pats:
        if q in have:
            return True
        if any(ch in q for ch in "*?[") and any(fnmatch.fnmatchcase(h, q) for h in have):
            return True
    return False

def ends_so(p):
    return p in made or os.path.basename(p) in made and "/" not in p or any(
        h == p or h.endswith("/" + p) for h in have)

bad, checked, n = 0, 0, 0
for f in sorted(files):
    if not f.startswith(tuple(d + "/" for d in SCANNED)) and f != "meson.build":
        continue
    if "/corpus/" in f or not os.path.isfile(f):
        continue
    try:
        text = open(f, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        continue
    k = kind(f, text)
    if not k:
        continue
    comments = c_comments(text) if k == "c" else hash_comments(text, k == "py")
    here = os.path.dirname(f)
    in_src = f.startswith(("src/", "include/"))
    refs, wrong = 0, []
    for line, body in comments:
        for off, l in enumerate(body.split("\n")):
            for m in DOCNAME.finditer(l):
                refs += 1
                if m.group(1) not in top_docs:
                    wrong.append((line + off, m.group(1)))
            for m in PATH.finditer(l):
                tok = m.group(0).rstrip(".,;:'\"`)")
                before = l[:m.start()]
                if not tok or tok.endswith("/") and tok.count("/") == 1 and tok[:-1] not in TOP:
                    continue
                first = tok.split("/")[0]
                if tok.startswith("../"):
                    if not tok.endswith(DOCS):
                        continue
                    ok = exists(tok, here)
                elif first in TOP and "/" in tok:
                    ok = exists(tok.rstrip("/")) or exists(tok.rstrip("/"), here)
                elif tok.endswith(".md"):
                    ok = exists(tok) or exists(tok, here) or any(h.endswith("/" + tok) for h in have)
                elif in_src and SRCNAME.match(tok):
                    if before.endswith("<") or re.search(r"\b\w+'s (?:own )?$", before):
                        continue
                    ok = ends_so(tok)
                else:
                    continue
                refs += 1
                if not ok:
                    wrong.append((line + off, tok))
    if not refs:
        continue
    checked += 1
    if not wrong:
        n += 1
        print(f"ok {n} - refs/{f}: {refs} citation(s) of files, all there")
    for line, tok in wrong:
        n += 1
        bad += 1
        print(f"not ok {n} - refs/{f}:{line}: a comment cites {tok}, which the repository does not have "
              "(cite the README, the man page or doc/, or the file's real path)")
print(f"# {checked} files cite files in their comments; {bad} citation(s) of missing files")
print(f"1..{n}")
sys.exit(1 if bad else 0)
PY
