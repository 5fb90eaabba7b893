"""Compatibility names for callers of the former implementation module (new code: see below).

Implementations are fields of the entries now (`OpDef.impl`, `.native`, `.jax`, `.static_inputs`): import
`Unsupported` and `jnp` from `xcviz.ops.arrays`, read `opdef.static_inputs`; `install()` has nothing to do.
"""
from __future__ import annotations

from . import REGISTRY
from .arrays import Unsupported, jnp  # noqa: F401

STATIC_INPUTS: dict[str, tuple[int, ...]] = {o.name: o.static_inputs for o in REGISTRY if o.impl is not None}


def install() -> None:
    """Nothing to bind any more: every entry carries its implementation from registration on."""
