"""Builds xcviz's compiled kernels: every xcviz/**/*.pyx, cythonized and compiled by `pip install` (metadata: pyproject.toml)."""
import glob
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def extensions() -> list[Extension]:
    """One extension module per .pyx file under xcviz/, named by its path (xcviz/a/b.pyx -> xcviz.a.b). Each
    file sets its own directives (boundscheck, wraparound) in its header; numpy's headers are there for a
    module that cimports numpy."""
    flags = [] if sys.platform == "win32" else ["-g0"]  # (no debug info: each .so ~5x smaller, compiled in ~60 % of the time)
    out = []
    for path in sorted(glob.glob(os.path.join(HERE, "xcviz", "**", "*.pyx"), recursive=True)):
        rel = os.path.relpath(path, HERE)
        name = os.path.splitext(rel)[0].replace(os.sep, ".")
        out.append(Extension(name, [rel], include_dirs=[numpy.get_include()], extra_compile_args=flags,
                             define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]))
    return out


setup(ext_modules=cythonize(extensions(), compiler_directives={"language_level": 3}))
