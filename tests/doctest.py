#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation's examples, extracted for tests/e2e/test_doctest.sh.

    doctest.py OUTDIR FILE...

Every fenced block of README.md and doc/*.md labelled sh, bash or shell is a shell example,
and one labelled python a Python example: each is written to OUTDIR/N.sh or OUTDIR/N.py
and listed in OUTDIR/manifest, one line per example, tab-separated:

    N  FILE  LINE  LANG  run|skip  REASON

Comments on the lines right above a block's fence say how the test treats it:

    <!-- doctest: skip (why it cannot run in CI: the internet, a terminal, a peer tool) -->
    <!-- doctest: setup: SHELL CODE -->     run first, not shown to the reader (OUTDIR/N.setup)
    <!-- doctest: cleanup: SHELL CODE -->   run after the file's last example, whatever happened

Mistakes here fail rather than pass: a skip without a reason, an annotation of another
kind, an annotation that no block follows, an unlabelled block that reads as a shell
command (label it sh, or text), and in a block that runs a pipe into `head` or `grep -q`
(its writer may die of SIGPIPE, or not, by timing: the blocks run under pipefail) are
each printed as "ERROR FILE:LINE why" on stdout, and
the exit status is 1.
"""
import os
import re
import sys

RUN = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "py", "python3": "py"}
FENCE = re.compile(r"^(```|~~~)\s*([\w+-]*)\s*$")
NOTE = re.compile(r"^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$")
SHELLISH = re.compile(r"^\s*(\$ |cordon |sudo |\./|mkdir |cd |git |meson |ln -s )")
# a reader that may stop before the writer ends: under pipefail the writer's SIGPIPE then
# fails the block, or not, by timing
EARLY_EXIT = re.compile(r"\|\s*(head\b|grep\s+(-\w*[qm]|--quiet|--max-count))")


def scan(path, rel, out, errors, manifest, counter):
    lines = open(path, encoding="utf-8").read().split("\n")
    notes = []  # (line, text) of the annotations right above the current line
    cleanups = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = NOTE.match(line)
        if m:
            notes.append((i + 1, m.group(1)))
            i += 1
            continue
        f = FENCE.match(line)
        if not f:
            for n, _ in notes:
                errors.append(f"{rel}:{n} a doctest annotation with no fenced block right below it")
            notes = []
            i += 1
            continue
        fence, lang = f.group(1), f.group(2).lower()
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        kind = RUN.get(lang)
        if kind is None:
            first = next((b for b in body if b.strip()), "")
            if lang == "" and SHELLISH.match(first):
                errors.append(f"{rel}:{start} an unlabelled block that reads as a shell command: "
                              "label it ```sh (run by the doctest) or ```text")
            for n, _ in notes:
                errors.append(f"{rel}:{n} a doctest annotation above a block that is not run ({lang or 'unlabelled'})")
            notes = []
            continue
        action, reason, setup = "run", "", []
        for n, text in notes:
            if text.startswith("skip"):
                r = re.fullmatch(r"skip\s*\((.+)\)", text)
                if not r:
                    errors.append(f"{rel}:{n} 'doctest: skip' needs a reason: skip (why)")
                    continue
                action, reason = "skip", r.group(1).strip()
            elif text.startswith("setup:"):
                setup.append(text[len("setup:"):].strip())
            elif text.startswith("cleanup:"):
                cleanups.append(text[len("cleanup:"):].strip())
            else:
                errors.append(f"{rel}:{n} unknown doctest annotation '{text}' "
                              "(skip (why), setup: CODE, cleanup: CODE)")
        notes = []
        if kind == "sh" and action == "run":
            for k, b in enumerate(body):
                if EARLY_EXIT.search(b):
                    errors.append(f"{rel}:{start + 1 + k} a pipe into a reader that may stop early "
                                  "(head, grep -q/-m): its writer may die of SIGPIPE, by timing; "
                                  "use sed -n 1,Np or a file")
        counter[0] += 1
        n = counter[0]
        with open(os.path.join(out, f"{n}.{kind}"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(body) + "\n")
        with open(os.path.join(out, f"{n}.setup"), "w", encoding="utf-8") as fh:
            fh.write("".join(s + "\n" for s in setup))
        manifest.append(f"{n}\t{rel}\t{start}\t{kind}\t{action}\t{reason}")
    for n, _ in notes:
        errors.append(f"{rel}:{n} a doctest annotation with no fenced block right below it")
    return cleanups


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: doctest.py OUTDIR FILE...")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    errors, manifest, counter = [], [], [0]
    for path in sys.argv[2:]:
        rel = os.path.basename(path) if os.path.basename(path) == "README.md" else \
            os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        cleanups = scan(path, rel, out, errors, manifest, counter)
        key = rel.replace("/", "_")
        with open(os.path.join(out, f"cleanup-{key}.sh"), "w", encoding="utf-8") as fh:
            fh.write("".join(c + "\n" for c in cleanups))
    with open(os.path.join(out, "manifest"), "w", encoding="utf-8") as fh:
        fh.write("".join(m + "\n" for m in manifest))
    for e in errors:
        print("ERROR " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
