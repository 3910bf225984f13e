#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/python_pip.sh REPO LIBRARY: `pip install ./python` into a fresh venv (Debian's
# python3, --system-site-packages for its setuptools; no index: nothing may come from the
# network), then the installed package works with neither PYTHONPATH nor CORDON_LIBRARY:
# its own libcordon.so.0 is loaded, a command runs, the asyncio API and the example bash
# tool (examples/bash_tool.py) work.  TAP.
#
# As root the package builds libcordon from a copy of the sources (meson and ninja, as a
# user's `pip install ./python` does); as another user it takes LIBRARY, built already
# (CORDON_PREBUILT_LIBRARY), to keep CI short.
set -u
repo=$1 lib=$2
py=/usr/bin/python3
echo "1..5"
[ -x "$py" ] || { echo "ok 1 # SKIP no /usr/bin/python3"; exit 0; }
$py -c 'import ensurepip, venv' 2>/dev/null || { echo "ok 1 # SKIP python3-venv is not installed (bootstrap.sh installs it)"; exit 0; }
if ldd "$lib" 2>/dev/null | grep -q libasan; then
  echo "ok 1 # SKIP $lib is a sanitizer build (python3 cannot load it)"
  exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src
mkdir -p "$src"
# a copy: pip builds in the tree it is given, and the checkout is not ours to write to
if [ "$(id -u)" = 0 ]; then
  (cd "$repo" && git ls-files -co --exclude-standard 2>/dev/null | grep -v '^build' | tar -cf - -T -) | tar -xf - -C "$src" ||
    { echo "not ok 1 - cannot copy the sources"; exit 0; }
  unset CORDON_PREBUILT_LIBRARY
  how="built from the sources"
else
  cp -r "$repo/python" "$repo/meson.build" "$repo/setup.py" "$src/" && mkdir -p "$src/doc" && cp "$repo/doc/api.md" "$src/doc/" ||
    { echo "not ok 1 - cannot copy python/"; exit 0; }
  export CORDON_PREBUILT_LIBRARY=$lib
  how="with the build's libcordon"
fi
$py -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1 || { echo "not ok 1 - python3 -m venv: $(tail -3 "$tmp/venv.log")"; exit 0; }
if PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/pip" install "$src/python" >"$tmp/pip.log" 2>&1; then
  echo "ok 1 - pip install ./python into a fresh venv, offline ($how)"
else
  echo "not ok 1 - pip install ./python: $(tail -15 "$tmp/pip.log" | tr '\n' ' ')"
  exit 0
fi
cd "$tmp" || exit 1
out=$(env -u PYTHONPATH -u CORDON_LIBRARY "$tmp/venv/bin/python" - "$tmp" 2>&1 <<'PY'
import os, sys
import cordon
here = os.path.dirname(cordon.__file__)
assert here.startswith(sys.argv[1] + "/venv/"), f"imported from {here}, not the venv"
assert cordon._L()._name == os.path.join(here, "libcordon.so.0"), f"loaded {cordon._L()._name}"
p = cordon.Policy(no_workspace=True, cwd="/", timeout=60)
r = cordon.run(["sh", "-c", "echo out; echo err >&2; exit 3"], policy=p, capture=True, merge_stderr=False)
assert (r.exit_code, r.stdout, r.stderr) == (3, b"out\n", b"err\n"), r
print("version", cordon.version())
PY
) && echo "ok 2 - the installed package loads its own library and runs a command ($out)" ||
  echo "not ok 2 - the installed package: $out"
out=$(env -u PYTHONPATH -u CORDON_LIBRARY "$tmp/venv/bin/python" - 2>&1 <<'PY'
import asyncio, cordon, cordon.aio
async def main():
    p = cordon.Policy(no_workspace=True, cwd="/", timeout=60)
    r = await cordon.aio.run(["cat"], policy=p, input=b"abc")
    assert r.stdout == b"abc", r
    async with cordon.aio.Session(p) as s:
        rs = await asyncio.gather(*[s.run(["sh", "-c", f"echo {i}"]) for i in range(3)])
        assert [x.stdout for x in rs] == [b"0\n", b"1\n", b"2\n"], rs
asyncio.run(main())
PY
) && echo "ok 3 - cordon.aio from the installed package" || echo "not ok 3 - cordon.aio: $out"
mkdir -p "$tmp/repo"
cp "$repo/examples/bash_tool.py" "$tmp/bash_tool.py"
out=$(cd "$tmp/repo" && printf 'echo hi; pwd\nnosuchcmd\n' |
  env -u PYTHONPATH -u CORDON_LIBRARY timeout 120 "$tmp/venv/bin/python" "$tmp/bash_tool.py" "$tmp/repo" 2>&1)
if printf '%s\n' "$out" | grep -qF "\"stdout\": \"hi\\n$tmp/repo\\n\"" &&
  printf '%s\n' "$out" | grep -qF '"exit_code": 127'; then
  echo "ok 4 - examples/bash_tool.py: output, the workspace as the directory, 127 for a missing command"
else
  echo "not ok 4 - examples/bash_tool.py: $out"
fi
# `pip install .` from the top of the checkout: the same package (setup.py hands over to
# python/setup.py), here with the build's library
$py -m venv --system-site-packages "$tmp/venv2" >"$tmp/venv.log" 2>&1
rm -rf "$src/python/build"
if CORDON_PREBUILT_LIBRARY=$lib PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv2/bin/pip" install "$src" >"$tmp/pip2.log" 2>&1 &&
  out=$(cd "$tmp" && env -u PYTHONPATH -u CORDON_LIBRARY "$tmp/venv2/bin/python" -c \
    'import cordon, os; assert cordon._L()._name.startswith(os.path.dirname(cordon.__file__)); print(cordon.version())' 2>&1); then
  echo "ok 5 - pip install . from the top of the checkout ($out)"
else
  echo "not ok 5 - pip install .: $(tail -10 "$tmp/pip2.log" | tr '\n' ' ') ${out:-}"
fi
