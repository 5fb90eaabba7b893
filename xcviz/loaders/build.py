"""Build: a freshly read Graph goes to the passes that make it whole (passes.prepare: resolve ops, check references,
order, infer shapes); `finalize` is that step under the name loaders, tests and benchmarks call it by."""
from __future__ import annotations

from ..passes.prepare import prepare as finalize  # noqa: F401
