"""Build the compiled kernels (every xcviz/**/*.pyx, by Cython) at install; the rest is pyproject.toml."""
from glob import glob

from Cython.Build import cythonize
from setuptools import setup

setup(ext_modules=cythonize(sorted(glob("xcviz/**/*.pyx", recursive=True)),
                            compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False}))
