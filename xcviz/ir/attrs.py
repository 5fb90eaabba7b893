"""Hashable keys of attribute dicts: equal keys mean equal attributes, for caches keyed by them."""
from __future__ import annotations


def attrs_key(attrs: dict) -> tuple | None:
    """A hashable form of scalar attributes that keeps 1, 1.0 and True apart; None if any value is a container."""
    key = []
    for k, v in attrs.items():
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            key.append((k, t, v))
        elif t is float:
            key.append((k, t, repr(v)))  # repr keeps -0.0 apart from 0.0
        else:
            return None
    return tuple(key)
