"""Helpers the op implementations share: the array namespaces (NumPy, lazy jax.numpy), static inputs, dtypes.

An implementation is written once as `fn(xp, attrs, *inputs) -> array | tuple`, `xp` being numpy for the
native reference or jax.numpy for the lowering. JAX is imported only when a lowering runs (`jnp()`).
"""
from __future__ import annotations

import numpy as np

from ..errors import XcvizError


class Unsupported(XcvizError):
    """An attribute value, dtype or input the implementation does not cover (stated, never guessed)."""


def jnp():
    """jax.numpy with 64-bit types on (ONNX int64 indices and float64 tensors keep their dtypes)."""
    import jax

    if not jax.config.read("jax_enable_x64"):
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp_

    return jnp_


def is_np(xp) -> bool:
    return xp is np


def lit(x, v):
    """A Python scalar as an array of x's dtype (keeps float32 float32 in both namespaces)."""
    return np.asarray(v, dtype=x.dtype)


def static(v, what: str = "input"):
    """A concrete NumPy value for shape-like inputs (reshape target, slice bounds, pads, ...)."""
    if v is None:
        return None
    try:
        return np.asarray(v)
    except Exception:  # noqa: BLE001 - a JAX tracer: the value is only known at run time
        raise Unsupported(f"{what} must be a constant for XLA (it decides an output shape)",
                          hint="XLA needs static shapes; such a node falls back, or feed the value as a constant") from None


def present(v) -> bool:
    """ONNX optional inputs arrive as None (empty name) or as an empty tensor."""
    return v is not None and not (hasattr(v, "size") and v.size == 0 and getattr(v, "ndim", 1) == 1 and v.shape == (0,))


def ints(v, what: str = "input") -> list[int]:
    return [int(x) for x in static(v, what).reshape(-1)]


def np_dtype(to) -> np.dtype:
    """A dtype from an ONNX TensorProto enum, a NumPy name or an xcviz name."""
    from ..ir import canonical_dtype

    if isinstance(to, (int, np.integer)) and not isinstance(to, bool):
        import onnx

        if int(to) == onnx.TensorProto.BFLOAT16:
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(to)))
    name = canonical_dtype(str(to))
    if name is None or name == "string":
        raise Unsupported(f"cannot cast to {to!r}")
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)
