"""Build: a read Graph goes to passes.prepare (resolve, check, order, infer); `finalize` is that step's old name."""
from __future__ import annotations

from ..passes.prepare import prepare as finalize  # noqa: F401  (tests, benchmarks and docs call it so)
