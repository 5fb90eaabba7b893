"""Numbers people read: bytes in KiB/MiB, percentages, times, speedups. Unknown is 'unknown', never 0."""
from __future__ import annotations


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
    return f"{n} B"


def fmt_pct(x: float | None) -> str:
    return "unknown" if x is None else f"{100 * x:.0f} %"


def fmt_speedup(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.2f}×"
