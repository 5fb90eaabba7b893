"""TF_XLA_FLAGS as one string ("--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=4 ...") -> xcviz's options."""
from __future__ import annotations

import shlex

from ..errors import XcvizError

# flags that only steer TF's own run (dumps, logging, devices): accepted, nothing to map
_IGNORED = {"tf_xla_auto_jit", "tf_xla_cpu_global_jit", "tf_xla_clustering_debug", "tf_xla_enable_lazy_compilation",
            "tf_xla_always_defer_compilation", "tf_xla_async_compilation", "tf_xla_enable_xla_devices",
            "tf_xla_persistent_cache_directory"}
_SIZES = {"tf_xla_min_cluster_size": "min_cluster_size", "tf_xla_max_cluster_size": "max_cluster_size"}


def parse_tf_xla_flags(text: str) -> dict[str, int]:
    """{'min_cluster_size': 4, ...} from a TF_XLA_FLAGS string; an unknown flag or a bad value is an error.
    --tf_xla_auto_jit other than 1/2 (or 'fusible') is refused: xcviz models auto-clustering being on."""
    out: dict[str, int] = {}
    for word in shlex.split(text or ""):
        name, _, value = word.lstrip("-").partition("=")
        if name in _SIZES:
            if not value.isdigit():
                raise XcvizError(f"bad --tf-xla-flags value {word!r}", hint=f"write --{name}=N with N >= 0")
            out[_SIZES[name]] = int(value)
        elif name == "tf_xla_auto_jit" and value not in ("", "1", "2", "single-gpu(1)", "single-gpu(2)", "fusible"):
            raise XcvizError(f"--tf-xla-flags: {word!r} turns auto-clustering off",
                             hint="xcviz models --tf_xla_auto_jit=1 or 2 (MarkForCompilationPass on)")
        elif name not in _IGNORED:
            raise XcvizError(f"--tf-xla-flags: unknown or unmodelled flag {word!r}",
                             hint="modelled: --tf_xla_min_cluster_size, --tf_xla_max_cluster_size, --tf_xla_auto_jit")
    return out
