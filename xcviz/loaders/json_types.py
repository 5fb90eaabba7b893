"""The JSON graph's typed form (msgspec Structs) and the checks the compiled reader (json_scanned) shares with the schema.

The reader only ever accepts: on any doubt it hands the file on, and the generic path (schema.read_mapping)
gives the usual result or error message."""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from ..ir import DTYPE_ALIASES, DTYPE_SIZES, short
from ..passes.columns import attr_codes
from .parse import parsed_keys
from .schema import GRAPH_KEYS, check_attr, declared_type, plain_attrs, where_text

_Name = Annotated[str, msgspec.Meta(min_length=1)]
# dtypes as msgspec Literals: decoded into one shared string object per spelling, so that the types below
# are keyed by identity-cached hashes (another spelling, e.g. "Float32", goes the generic way)
_DType = Literal[tuple(sorted({*DTYPE_SIZES, *DTYPE_ALIASES}))]  # type: ignore[valid-type]
DTYPES = {s: s for s in _DType.__args__}  # (json_scanned's check of a dtype spelling)
_Refs = Union[tuple[str, ...], None, UnsetType]
_Opt = Union[str, None, UnsetType]


class Row(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One node as the schema allows it on the fast path (`outputs`/`num_outputs`: the generic path)."""

    name: _Name
    op: _Name
    inputs: _Refs = UNSET
    control_inputs: _Refs = UNSET
    attrs: Union[dict[str, Any], None, UnsetType] = UNSET
    device: _Opt = UNSET
    compile: Union[bool, None, UnsetType] = UNSET
    scope: _Opt = UNSET
    doc: _Opt = UNSET
    shape: Union[tuple[Union[int, str], ...], None, UnsetType] = UNSET
    dtype: Union[_DType, None, UnsetType] = UNSET


class Doc(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    nodes: list[Row]
    name: Any = UNSET
    inputs: Any = UNSET
    outputs: Any = UNSET
    doc: Any = UNSET
    dims: Any = UNSET
    schema_version: Any = UNSET
    description: Any = UNSET


assert set(Doc.__struct_fields__) == GRAPH_KEYS
DECODER = msgspec.json.Decoder(Doc)
NO_ATTRS: dict = {}  # (in the columns only)


def check_attrs(attrs: list, with_attrs: list, names: list, source: str, max_depth: int,
                acodes: tuple | None = None) -> tuple:
    """(attr_codes, the nodes whose attributes hold lists or mappings, the keys the dicts hold): every
    distinct dict checked once by its integer code (passes.columns.attr_codes, unless given), the nested ones
    as the generic path's _node checks them (XcvizError: the generic path says it the usual way)."""
    acodes = acodes or attr_codes(attrs, with_attrs)
    acode, reps = acodes
    plain = np.array([True] + [plain_attrs(a) for a in reps[1:]])
    sizes = np.array([0] + [len(a) for a in reps[1:]], np.int64)
    rows_a = np.array(with_attrs, np.int64)
    ok = plain[acode[rows_a]]
    keys = int(sizes[acode[rows_a[ok]]].sum())
    nested = rows_a[~ok].tolist()
    for i in nested:
        a = attrs[i]
        keys += parsed_keys(a)
        where = where_text(source, f"node {short(names[i])}")
        for k, v in a.items():
            check_attr(k, v, where, max_depth)
    return acodes, nested, keys


def nested_where(nested: list, names: list, source: str, n: int) -> list | None:
    """The `where` column: set on the nodes with nested attributes, as the generic path's _node leaves them."""
    if not nested:
        return None
    where = [None] * n
    for i in nested:
        where[i] = where_text(source, f"node {short(names[i])}")
    return where


def declared_from_codes(shapes: tuple, dtypes: tuple, n: int) -> tuple | None:
    """_declared from each column as (code per row, the value of each code (UNSET: absent), rows holding
    one); equal values must have equal codes."""
    (sid, shape_of, s_held), (did, dtype_of, d_held) = shapes, dtypes
    if not s_held and not d_held:
        return [[]] * n, np.zeros(n, np.int64), [[]], 0, 0
    pair = sid * len(dtype_of) + did
    if len(shape_of) * len(dtype_of) <= 4 * n:  # (a table beats sorting)
        present = np.zeros(len(shape_of) * len(dtype_of), np.int64)
        present[pair] = 1
        pairs = np.flatnonzero(present)
        inverse = (np.cumsum(present) - 1)[pair]
    else:
        pairs, inverse = np.unique(pair, return_inverse=True)
    same: dict = {}
    lists = []
    for code in pairs.tolist():
        shape, dtype = shape_of[code // len(dtype_of)], dtype_of[code % len(dtype_of)]
        if shape is UNSET and dtype is UNSET:
            lists.append([])
            continue
        # (bool is not int to msgspec, so a shape tells apart what `==` does not: True, 1 and 1.0)
        t = declared_type(None if shape is UNSET or shape is None else list(shape), None if dtype is UNSET else dtype,
                           same.setdefault)
        if t is False:
            return None
        lists.append([t])
    return list(map(lists.__getitem__, inverse.tolist())), inverse, lists, s_held, d_held
