#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The longest functions and the largest files of a C source tree (default: src/).

usage: bench/code_size.py [--top N] [--max-function N] [--max-file N] [DIR]

A function is counted from the line of its name to the closing brace in column 0 (the
tree's .clang-format style: the opening brace of a function on a line of its own).
Prints the top N of each; with --max-function / --max-file, exits 1 when one is over,
saying which.  Nothing is compiled; comments and blank lines count as lines."""
import argparse
import os
import re
import sys

NAME = re.compile(r"^[A-Za-z_][^;=]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    """(name, first line, length) of each function definition of a file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # the signature: back to the line that starts at column 0 with a name
            j = i - 1
            while j > 0 and (lines[j].startswith((" ", "\t")) or lines[j] == ""):
                j -= 1
            m = NAME.match(lines[j])
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m and not lines[j].startswith(("struct ", "typedef ", "enum ", "union ")):
                out.append((m.group(1), j + 1, k - j + 1))
            i = k
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max-function", type=int)
    ap.add_argument("--max-file", type=int)
    ap.add_argument("dir", nargs="?", default="src")
    a = ap.parse_args()
    files, funcs = [], []
    for root, _, names in os.walk(a.dir):
        for n in names:
            if n.endswith((".c", ".h")):
                p = os.path.join(root, n)
                with open(p, encoding="utf-8", errors="replace") as f:
                    files.append((sum(1 for _ in f), p))
                funcs += [(length, p, line, name) for name, line, length in functions(p)]
    files.sort(reverse=True)
    funcs.sort(reverse=True)
    print(f"{len(files)} files, {len(funcs)} functions in {a.dir}")
    print("largest files:")
    for n, p in files[: a.top]:
        print(f"  {n:6d}  {p}")
    print("longest functions:")
    for n, p, line, name in funcs[: a.top]:
        print(f"  {n:6d}  {name} ({p}:{line})")
    if funcs:
        lengths = sorted(f[0] for f in funcs)
        print(f"median function {lengths[len(lengths) // 2]} lines, p99 {lengths[int(len(lengths) * 0.99)]}")
    bad = []
    if a.max_function is not None:
        bad += [f"{name} ({p}:{line}) has {n} lines" for n, p, line, name in funcs if n > a.max_function]
    if a.max_file is not None:
        bad += [f"{p} has {n} lines" for n, p in files if n > a.max_file]
    for b in bad:
        print("over:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
