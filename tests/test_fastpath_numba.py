"""fastpath.import_numba: numba imported without its scipy BLAS probe still compiles linear algebra, and scipy
stays importable (the probe is answered 'no' only while numba.np.arraymath is imported)."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

pytest.importorskip("numba", reason="pip install numba")
pytest.importorskip("scipy", reason="numba's linear algebra needs scipy (pip install scipy)")

SCRIPT = r"""
import sys
import numpy as np
from xcviz.fastpath import import_numba
import_numba()
assert "scipy.linalg" not in sys.modules, "the probe imported scipy.linalg"
from numba import njit

@njit
def f(a, b):
    return np.dot(a, b), np.cov(a)

x = np.arange(4.0)
d, c = f(x, x)
assert d == 14.0 and abs(c - np.cov(x)) < 1e-12
import scipy.linalg

print("ok", scipy.linalg.cython_blas.__name__)
"""


def test_numba_without_the_blas_probe_still_compiles_linear_algebra():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "scipy.linalg.cython_blas"]
