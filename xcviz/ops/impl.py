"""Executable op implementations: fill every registry row's `native` (NumPy) and `jax` (jax.numpy) slots.

Each implementation in impl_*.py is written once over an array namespace `xp` (numpy or jax.numpy) as
`fn(xp, attrs, *inputs) -> array | tuple`; a family module lists them in `IMPLS = {canonical name: Impl}`.
`install()` binds them to the rows: `native` always, `jax` only for rows the registry calls compilable.
Imported lazily (by execute/jit), so `import xcviz` never pays for NumPy kernels or JAX.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import XcvizError


class Unsupported(XcvizError):
    """An attribute value, dtype or input the implementation does not cover (stated, never guessed)."""


@dataclass(frozen=True)
class Impl:
    fn: Callable                      # fn(xp, attrs, *inputs), generic over numpy / jax.numpy
    jax_fn: Callable | None = None    # a JAX-specific lowering (lax.conv, ...) when the generic one is not it
    jax_ok: bool = True               # False: native only (data-dependent shapes, host side effects)
    static: tuple[int, ...] = ()      # inputs that decide output shapes: compile-time constants under XLA


_installed = False
STATIC_INPUTS: dict[str, tuple[int, ...]] = {}


def jnp():
    """jax.numpy with 64-bit types on (ONNX int64 indices and float64 tensors keep their dtypes)."""
    import jax

    if not jax.config.read("jax_enable_x64"):
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp_

    return jnp_


def is_np(xp) -> bool:
    return xp is np


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


def install() -> None:
    """Bind every implementation to its row (once). Rows without one keep None and cannot execute."""
    global _installed
    if _installed:
        return
    from . import impl_control, impl_math, impl_nn
    from .registry import REGISTRY

    for table in (impl_math.IMPLS, impl_nn.IMPLS, impl_control.IMPLS):
        for name, impl in table.items():
            opdef = REGISTRY.ops[name]
            object.__setattr__(opdef, "native", _bind(impl.fn, None))
            STATIC_INPUTS[name] = impl.static
            if impl.jax_ok and opdef.devices:
                object.__setattr__(opdef, "jax", _bind(impl.jax_fn or impl.fn, jnp))
    _installed = True


def _bind(fn: Callable, xp_getter: Callable | None) -> Callable:
    if xp_getter is None:
        def native(attrs, *inputs):
            return fn(np, attrs, *inputs)
        native.__name__ = f"native_{fn.__name__}"
        return native

    def lowered(attrs, *inputs):
        return fn(xp_getter(), attrs, *inputs)
    lowered.__name__ = f"jax_{fn.__name__}"
    return lowered
