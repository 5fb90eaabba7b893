"""A report's JSON text: `json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)` byte for byte, in C.

json.dumps encodes in Python once it indents (far too slow for a big graph's cluster report), so msgspec encodes
and indents instead. The two agree on everything a report holds but floats, which msgspec spells its own way
(`1e16`, `0.00001`): each float is handed over as json's own text of it. A report builder marks what it
knows holds no float (a node table) with NoFloats, and that part is not walked at all. Anything msgspec
cannot take as json would (a key that is not a str or an int, a number type of another library, a lone
surrogate) goes the way of json.dumps, which then gives its own result or error."""
from __future__ import annotations

import json


class NoFloats(dict):
    """A mapping whose values hold no float at any depth and whose keys are all str (checked by its builder)."""

    __slots__ = ()


class NoFloatsList(list):
    """A list whose items hold no float at any depth and no mapping with a key that is not a str."""

    __slots__ = ()


class _Fallback(Exception):
    pass


_LEAVES = {str, int, bool, type(None)}  # written alike by both (exactly these types, not subclasses)


def dumps_indented(data) -> bytes:
    """UTF-8 bytes of `json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)`."""
    import msgspec

    try:
        return msgspec.json.format(msgspec.json.encode(_tokens(data)), indent=2)
    except Exception:  # noqa: BLE001 - whatever msgspec refuses, json decides (result or error) as before
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")


def _tokens(x):
    """`x` with each float as msgspec.Raw of json's text for it (NaN and infinities raise, as allow_nan=False)."""
    t = type(x)
    if t is str or t is int or t is bool or x is None or t is NoFloats or t is NoFloatsList:
        return x
    if isinstance(x, float):
        import msgspec

        return msgspec.Raw(json.dumps(x, allow_nan=False).encode())
    if isinstance(x, dict):
        if not set(map(type, x)) <= {str, int}:
            raise _Fallback  # (json spells True, None, 1.5 keys its own way)
        if set(map(type, x.values())) <= _LEAVES:  # (a type test per item at C speed, no call per item)
            return x
        return {k: _tokens(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if set(map(type, x)) <= _LEAVES:
            return x
        return [_tokens(v) for v in x]
    if isinstance(x, (str, int)):  # subclasses (enums): json writes them by their value, msgspec may not
        raise _Fallback
    return x  # (msgspec refuses what json refuses; the fallback then raises json's error)
