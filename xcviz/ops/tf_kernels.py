"""TensorFlow's XLA kernel registry (tf2xla): which TF ops XLA compiles, per device, with dtype constraints.

Read from TensorFlow 2.21 itself (tools/tf_suite.py: get_all_registered_kernels() after XLA registered its
compilation kernels, XLA_CPU_JIT from tensorflow-cpu, XLA_GPU_JIT from the tensorflow GPU wheel); the copy
in tf2xla_kernels.json is tests/data/tf_suite/tf2xla_kernels.json without the build notes."""
from __future__ import annotations

import json
import os
from functools import lru_cache

JIT_DEVICE = {"cpu": "XLA_CPU_JIT", "gpu": "XLA_GPU_JIT"}  # TF has no TPU JIT registry in these wheels


@lru_cache(maxsize=1)
def registry() -> dict:
    with open(os.path.join(os.path.dirname(__file__), "tf2xla_kernels.json"), encoding="utf-8") as f:
        return json.load(f)


def xla_devices(op: str) -> frozenset[str]:
    """xcviz device kinds on which TF registers an XLA kernel for `op`."""
    devs = registry()["ops"].get(op, ())
    return frozenset(k for k, jit in JIT_DEVICE.items() if jit in devs)


def type_refusal(op: str, device: str, attrs: dict) -> str | None:
    """Why the kernel's dtype constraints refuse the node's type attributes (None: they allow them)."""
    cons = registry()["type_constraints"].get(op, {}).get(JIT_DEVICE.get(device, ""), {})
    for attr, allowed in sorted(cons.items()):
        value = attrs.get(attr)
        for dt in value if isinstance(value, list) else [value]:
            if isinstance(dt, str) and dt not in allowed:
                return f"{attr}={dt} is not among the XLA kernel's types ({', '.join(allowed)})"
    return None
