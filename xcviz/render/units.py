"""Numbers people read: bytes in KiB/MiB, percentages, times, speedups. Unknown is 'unknown', never 0."""
from __future__ import annotations

from ..ir.text_print import byte_size


def fmt_bytes(n: int | None) -> str:
    return "unknown" if n is None else byte_size(n)


def fmt_pct(x: float | None) -> str:
    return "unknown" if x is None else f"{100 * x:.0f} %"


def fmt_speedup(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.2f}×"
