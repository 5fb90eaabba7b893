"""The JSON load: the compiled scanner's spans and codes (json_scan, json_join; Cython) made into the graph's columns.

No Python object per node except what the columns hold: the names come from one decoded byte string,
ops, devices, scopes, shapes and dtypes are decoded once per distinct spelling, attribute dicts and
control inputs in one msgspec decode of their spans, and the references stay positions (`src`) with
their text made only where someone reads it (ir.nodes.RefColumn). The top-level members are decoded
by json_types' decoder with the nodes array cut out, so their checks and messages stay those of the
schema. Every JSON file without a backslash is read here first. Only ever accepts: on any doubt it
returns None and the loader reads the file the generic way (parse + schema: the executable spec, tests
compare every result and error with it), which gives exactly the usual result or error message.
"""
from __future__ import annotations

from typing import Any, Union

import msgspec
import numpy as np
from msgspec import UNSET

from ..errors import XcvizError
from ..ir import FrozenDict, Graph
from ..passes.columns import Gathered, attr_codes
from ..ir.nodes import NodeRefs, Nodes, RefColumn
from .json_types import DECODER, DTYPES, NO_ATTRS, check_attrs, declared_from_codes, nested_where
from .parse import parsed_keys
from .schema import GRAPH_KEYS, graph_header, graph_tail, plain_attrs

try:
    from . import json_join as jj
    from . import json_scan as js
except ImportError as e:  # (a source checkout that was never built)
    raise ImportError(f"xcviz's compiled JSON scanner is not built ({e}): run `pip install -e .` "
                      "(or `python setup.py build_ext --inplace`) in the checkout") from e

_ATTRS = msgspec.json.Decoder(list[dict[str, Any]])
_CONTROL = msgspec.json.Decoder(list[tuple[str, ...]])
_SHAPE = msgspec.json.Decoder(tuple[Union[int, str], ...])
_COMPILE = [None, None, False, True]  # json_scan's compile states: absent, null, false, true
_BLANKS = b" \t\r\n"


def read(box: list, source: str, max_nodes: int | None, max_depth: int) -> tuple | None:
    """(graph, what the reader gathered: passes.columns.Gathered) from a JSON file's bytes (holding no backslash),
    or None. `box` is [the bytes], the caller's only hold on them: the read empties it once it has taken from
    them all it needs, so their memory serves what follows; a None after that (bad input, which the generic
    way reports) leaves `box` empty and the caller reads the file again."""
    data = box[0]
    nmax = data.count(b'"name"')  # (at least the number of nodes: the scanner's arrays are this long)
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    buf = np.frombuffer(data, np.uint8)
    scan = list(js.scan(buf, nmax))  # status, a, b, n, name_se, codes, compile_, in_off, refs, rare, counts, starts
    if scan[0]:
        return None
    a, b, n = scan[1:4]
    try:
        top = _top(data[:a] + b"[]" + data[b:])
        if top is None:
            return None
        top["nodes"] = [None] * n  # (graph_header checks its type and length)
        name, inputs = graph_header(top, source, max_nodes)
        del top["nodes"]
        outputs, dims = graph_tail(top, source)
        # (this frame keeps no array of the scan's: _graph lets each go once used; 10^6 nodes: ~160 MB)
        work = [box, buf, scan]
        del data, buf, scan
        return _graph(work, n, name, inputs, outputs, dims, source, max_depth)
    except XcvizError:  # the generic way finds the same error, and says it the usual way
        return None


def _top(cut: bytes) -> dict | None:
    """The top-level members but `nodes`, decoded as the schema reads them; None if a key repeats."""
    try:
        doc = DECODER.decode(cut)
    except (msgspec.MsgspecError, RecursionError):
        return None
    top = {k: getattr(doc, k) for k in GRAPH_KEYS if k != "nodes" and getattr(doc, k) is not UNSET}
    if len(top) + 1 + sum(map(parsed_keys, top.values())) != cut.translate(None, _BLANKS).count(b'":'):
        return None
    return top


def _graph(work, n, name, inputs, outputs, dims, source, max_depth):
    box, buf, scan = work
    work.clear()
    name_se, codes, compile_, in_off, refs, rare, counts, starts = scan[4:]
    del scan[:]
    refs, rare, attr_keys = refs[:2 * counts[1]], rare[:4 * counts[2]].reshape(-1, 4), int(counts[0])
    data = box[0]
    status, fs, fe, count = jj.intern(buf, starts, codes, n)
    if status:
        return None
    del starts
    in_names = [v.name.encode() for v in inputs]
    in_se = np.zeros(2 * len(in_names), np.int64)
    ends = np.cumsum([len(s) for s in in_names], dtype=np.int64)
    in_se[0::2], in_se[1::2] = ends - [len(s) for s in in_names], ends
    status, src, blob, off, slots = jj.join(buf, name_se, n, np.frombuffer(b"".join(in_names) + b"\0", np.uint8),
                                            in_se, refs)
    if status:  # a repeated name, or a clash of names: the usual checks say which
        return None
    del name_se

    def values(t: int) -> list[str]:
        return [data[s:e].decode("utf-8") for s, e in zip(fs[t, :count[t]].tolist(), fe[t, :count[t]].tolist())]

    op_of = values(js.T_OP)
    ops = list(map(op_of.__getitem__, codes[js.T_OP, :n].tolist()))
    declared = _declared(data, codes, fs, fe, count, n)
    if declared is None:
        return None
    # the rare fields' spans: every attribute dict in one decode, every control-input list in another
    attrs, ctl = [NO_ATTRS] * n, ()
    with_attrs, acodes = [], None
    for f, dec in ((4, _ATTRS), (3, _CONTROL)):
        sel = rare[rare[:, 1] == f]
        if not len(sel):
            continue
        spans = list(map(data.__getitem__, map(slice, sel[:, 2].tolist(), sel[:, 3].tolist())))
        try:
            vals = _shared(spans, dec) if f == 4 else dec.decode(b"[" + b",".join(spans) + b"]")
        except (msgspec.MsgspecError, RecursionError):
            return None
        at = sel[:, 0].tolist()
        if f == 4:
            with_attrs = [j for j, a in zip(at, vals) if a]
            list(map(attrs.__setitem__, with_attrs, filter(None, vals)))
            acodes = _attr_codes(spans, vals, at, n)
        else:
            ctl = [()] * n
            list(map(ctl.__setitem__, at, vals))
    device, scope = (None if count[t] == 0 else list(map(([None] + values(t)).__getitem__, (codes[t, :n] + 1).tolist()))
                     for t in (js.T_DEVICE, js.T_SCOPE))
    compiles = None if compile_[:n].max(initial=0) < 2 else list(map(_COMPILE.__getitem__, compile_[:n].tolist()))
    # references: positions; the text only of those that name no node or input ('' and 'name:k' ones)
    odd = {k: data[s:e].decode("utf-8") for k, s, e in
           zip(*(x.tolist() for x in (np.flatnonzero(src < 0),) + tuple(refs.reshape(-1, 2)[src < 0].T)))}
    field_codes = _field_codes(codes, compile_, n, values)
    op_codes = (codes[js.T_OP, :n].astype(np.int64), op_of)
    # nothing more is read from the file's bytes: their memory (as big as the file) serves the names and passes
    del values, data, buf, refs, rare, codes
    box.clear()
    names = blob.tobytes().decode("utf-8").split("\n")
    acodes, nested, keys = check_attrs(attrs, with_attrs, names, source, max_depth, acodes)
    if keys != attr_keys:  # a key repeated inside attributes (a dict keeps one)
        return None
    flat_refs = RefColumn(names, [v.name for v in inputs], src, odd)
    nodes = Nodes(n, {"name": names, "op": ops, "op_type": ops, "inputs": NodeRefs(flat_refs, in_off[:n + 1]),
                        "control_inputs": ctl, "attrs": attrs, "device": device, "compile": compiles, "scope": scope,
                        "outputs": declared[0], "where": nested_where(nested, names, source, n)},
                  find=_Finder(slots, blob, off))  # (Graph.position answers look-ups without a dict of 10^6 names)
    graph = Graph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, source=source, dims=dims)
    lens = np.diff(in_off[:n + 1])
    return graph, Gathered(flat_refs, src, lens, ops, None, attrs, declared[0], ctl if ctl else [()] * n,
                           acodes, declared[1:3], proven=True, op_codes=op_codes, field_codes=field_codes)


def _field_codes(codes, compile_, n: int, values) -> dict:
    """The device, scope and compile columns as NodeColumns.field_codes (the intern tables number values in order
    of first appearance; -1, absent or null, becomes code 0 for None)."""
    out = {f: (codes[t, :n] + 1, [None, *values(t)], True) for f, t in (("device", js.T_DEVICE), ("scope", js.T_SCOPE))}
    out["compile"] = (compile_[:n], _COMPILE, False)
    return out


class _Finder:
    """name -> node position or None, by json_join.find over the join's table and the names' bytes."""

    __slots__ = ("slots", "blob", "off")

    def __init__(self, slots, blob, off) -> None:
        self.slots, self.blob, self.off = slots, blob, off

    def __call__(self, name: str) -> int | None:
        k = jj.find(self.slots, self.blob, self.off, np.frombuffer(name.encode("utf-8", "surrogatepass"), np.uint8))
        return None if k < 0 else int(k)


def _shared(spans: list, dec) -> list:
    """The attribute dicts of these spans: each distinct spelling decoded once and its dict shared by the nodes
    that spell it so, where it holds only plain values (10^6 typed nodes: ~100k dicts of 7 spellings, ~19 MB
    and their decode); one holding a list or mapping is decoded per node (nothing mutable is shared)."""
    at = dict.fromkeys(spans)
    uniq = list(at)
    # (read-only, as a node's view holds them: the views share each spelling's one FrozenDict, not a copy each)
    at.update(zip(uniq, map(FrozenDict, dec.decode(b"[" + b",".join(uniq) + b"]"))))
    vals = list(map(at.__getitem__, spans))
    own = [j for j, v in enumerate(vals) if not plain_attrs(v)] if not all(map(plain_attrs, at.values())) else []
    if own:
        list(map(vals.__setitem__, own, dec.decode(b"[" + b",".join(map(spans.__getitem__, own)) + b"]")))
    return vals


def _attr_codes(spans: list, vals: list, at: list, n: int) -> tuple:
    """passes.columns.attr_codes of the nodes `at` holding the dicts `vals` decoded from `spans`: worked out once
    per distinct spelling (the same numbers and reps: both number in order of first appearance)."""
    first: dict = {}
    pos = np.array(list(map(first.setdefault, spans, range(len(spans)))), np.int64)
    starts = np.array(sorted(first.values()), np.int64)
    reps = list(map(vals.__getitem__, starts.tolist()))
    rcode, rreps = attr_codes(reps, [i for i, a in enumerate(reps) if a])
    code = np.zeros(n, np.int64)
    code[at] = rcode[np.searchsorted(starts, pos)]
    return code, rreps


def _declared(data, codes, fs, fe, count, n) -> tuple | None:
    """The declared types from the scanner's shape and dtype codes (each distinct spelling decoded once)."""
    cols = []
    def dtype(raw: bytes) -> str:
        return DTYPES[raw.decode("utf-8")]  # (KeyError: another spelling, the generic way)

    for t, check in ((js.T_SHAPE, _SHAPE.decode), (js.T_DTYPE, dtype)):
        code = codes[t, :n]
        held = int(np.count_nonzero(code >= 0))
        try:
            vals = [check(data[s:e]) for s, e in zip(fs[t, :count[t]].tolist(), fe[t, :count[t]].tolist())]
        except (msgspec.MsgspecError, KeyError):
            return None
        # equal values spelled apart ("[2,3]", "[2, 3]") get one code
        same: dict = {}
        remap = np.array([0] + [same.setdefault(v, len(same) + 1) for v in vals], np.int64)
        cols.append((remap[code.astype(np.int64) + 1], [UNSET] + list(same), held))
    return declared_from_codes(cols[0], cols[1], n)

