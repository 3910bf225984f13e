# SPDX-License-Identifier: Apache-2.0
"""`pip install .` from the top of a checkout: the Python package, as `pip install ./python`
(python/setup.py says how it is built, offline; doc/api.md, "Python")."""
import os
import runpy

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
runpy.run_path("setup.py", run_name="__main__")
