# SPDX-License-Identifier: Apache-2.0
"""pip install ./python: the cordon package with its own libcordon, built from this checkout.

    python3 -m pip install ./python                       # pip 23.0 (Debian 12): as it is
    python3 -m pip install --no-build-isolation ./python  # any pip, offline

The build runs meson and ninja on the checkout (the repository above this directory) and
puts the shared library into the package (cordon/libcordon.so.0), where the binding looks
first: nothing to set (no PYTHONPATH, no CORDON_LIBRARY).  It needs what building cordon
needs (meson, ninja, a C compiler, libjansson-dev; ./bootstrap.sh installs them) and
nothing from the network.  CORDON_PREBUILT_LIBRARY=/path/libcordon.so.0 takes a library
built already instead.

Why setup.py and no pyproject.toml: with a pyproject.toml, pip builds in an isolated
environment and downloads setuptools into it first, which fails offline (Debian's pip has
no index to reach here); without one, pip 23.0 builds with the setuptools it runs with
(Debian's python3-setuptools).  `--no-build-isolation` does the same with any pip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def project_version() -> str:
    m = re.search(r"version\s*:\s*'([^']+)'", (ROOT / "meson.build").read_text())
    return m.group(1) if m else "0"


def build_library(tmp: Path) -> Path:
    """libcordon.so built by meson into tmp; its path."""
    for tool in ("meson", "ninja"):
        if not shutil.which(tool):
            sys.exit(f"cordon: building libcordon needs {tool} (apt-get install meson ninja-build, or "
                     "./bootstrap.sh); or set CORDON_PREBUILT_LIBRARY to a built libcordon.so.0")
    if not (tmp / "build.ninja").exists():
        subprocess.check_call(["meson", "setup", str(tmp), str(ROOT), "--buildtype=release", "-Dwerror=false",
                               "-Dtests=false", "-Dstatic_cli=false", "-Ddefault_library=shared"])
    targets = json.loads(subprocess.check_output(["meson", "introspect", str(tmp), "--targets"]))
    lib = next(t for t in targets if t["name"] == "cordon" and t["type"] == "shared library")
    out = Path(lib["filename"][0])
    subprocess.check_call(["ninja", "-C", str(tmp), os.path.relpath(out, tmp)])
    return out


class BuildWithLibrary(build_py):
    """build_py, and libcordon into the package."""

    def run(self) -> None:
        super().run()
        prebuilt = os.environ.get("CORDON_PREBUILT_LIBRARY")
        if prebuilt:
            lib = Path(prebuilt)
        else:
            tmp = Path(self.get_finalized_command("build").build_temp).resolve() / "libcordon"
            lib = build_library(tmp)
        dest = Path(self.build_lib) / "cordon" / "libcordon.so.0"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib, dest)  # the file, not the symlink chain
        dest.chmod(0o755)


class BinaryDistribution(Distribution):
    """A package with a shared library in it: a platform wheel, installed in platlib."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    name="cordon",
    version=project_version(),
    description="Run the commands of AI coding agents in a fresh, minimal, unprivileged Linux sandbox",
    long_description=(ROOT / "doc" / "api.md").read_text() if (ROOT / "doc" / "api.md").exists() else "",
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    packages=["cordon"],
    package_dir={"cordon": "cordon"},
    package_data={"cordon": ["py.typed"]},
    python_requires=">=3.9",
    zip_safe=False,
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildWithLibrary},
    classifiers=[
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3",
        "Typing :: Typed",
    ],
)
