"""The text form of a graph (`.xcir`): an SSA-style listing a person reads and `text_parse` reads back exactly.

    graph seed_demo(%x: f32[1,3,32,32], %w1: f32[8,3,3,3]) [dims={batch=8}] {
      %c1: f32[1,8,32,32] = conv2d(%x, %w1) {pads=[1,1,1,1]}     # cluster_0
      %p1: f32[1,8,16,16] = maxpool(%c1, ^%c0) [compile=false]   # fallback: forced off XLA
      %t: (f32[2], i64[2]) = topk(%p1:0, none) [op_type="TopK"]
      return %c1, %t:1 as "indices"
    }

Names that are not plain (`[A-Za-z0-9_./-]+`) are quoted with escapes for `"`, `\\` and every
non-printable character, so any name round-trips and nothing in the text moves a terminal's cursor.
`none` is an absent optional input, `^%n` a control input, `%n:k` output k of node n; the attribute
dict `{...}` holds the op's attributes, the list `[...]` the node's own fields (device, scope, compile,
op_type where it differs from the canonical op, and the note of an opaque op). Constants are
`dense<TYPE BODY>`: nested decimal lists up to DECIMAL_MAX elements (when they read back to the same
bytes), else the array's little-endian bytes in hex. The text is exact: it is not a summary."""
from __future__ import annotations

import re
from typing import Callable

from . import DTYPE_SIZES, TensorType
from .body import Body
from .containers import container_text
from .function import TFFunction
from .types import FrozenDict, FrozenList

BARE_NAME = re.compile(r"[A-Za-z0-9_./-]+")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
PORT_REF = re.compile(r"(.+):([0-9]+)", re.DOTALL)

# The short dtype spellings (f32, i64, ...); the other known dtypes print by their canonical name.
SHORT_DTYPES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
                "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8"}
DECIMAL_MAX = 256   # elements of a constant written as decimals; above, hex (fast and exact at any size)
HEX_LINE = 64       # bytes of hex per line
ROW_MAX, ROW_ITEMS, ROW_INDENT = 100, 8, "      "  # longer decimal constants go one row a line
COMMENT_COLUMN_MAX = 100

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def escape(text: str) -> str:
    """`text` with quotes, backslashes and non-printable characters escaped (no surrounding quotes)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return text
    out = []
    for c in text:
        e = _ESCAPES.get(c)
        if e is None:
            if c.isprintable():
                e = c
            else:
                o = ord(c)
                e = f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"
        out.append(e)
    return "".join(out)


def quote(text: str) -> str:
    return f'"{escape(text)}"'


def name_text(name: str) -> str:
    """A node or input name after its `%`: bare when plain, else quoted."""
    return name if BARE_NAME.fullmatch(name) else quote(name)


def word_or_quoted(text: str) -> str:
    return text if WORD.fullmatch(text) else quote(text)


def ref_text(ref: str) -> str:
    """A data input: `none` for an absent optional one, `%n:k` for 'n:k' (the digits exactly as written)."""
    if not ref:
        return "none"
    m = PORT_REF.fullmatch(ref)
    if m:
        return f"%{name_text(m.group(1))}:{m.group(2)}"
    return "%" + name_text(ref)


def dtype_text(dtype: str | None) -> str:
    if dtype is None:
        return "?"
    if dtype in DTYPE_SIZES:
        return SHORT_DTYPES.get(dtype, dtype)
    return quote(dtype)  # not a canonical name (hand-built graphs): kept as written


def _dim(d, rank: int) -> str:
    if isinstance(d, str):
        if d == "?" and rank > 1:  # `[?]` alone is an unknown rank
            return "?"
        return d if WORD.fullmatch(d) else quote(d)
    return str(d)


def type_text(t: TensorType) -> str:
    """`f32[1,batch,64]`; `f32[?]` unknown rank, `?[2,3]` unknown dtype, `?` nothing known."""
    if type(t) is not TensorType:  # seq<...> / opt<...> (ir.containers)
        return container_text(t, type_text)
    if t.shape is None:
        return "?" if t.dtype is None else f"{dtype_text(t.dtype)}[?]"
    rank = len(t.shape)
    return f"{dtype_text(t.dtype)}[{','.join(_dim(d, rank) for d in t.shape)}]"


def types_text(outputs, memo: dict) -> str:
    """One output's type, or `(t0, t1, ...)` for any other count (types are few: each printed once)."""
    if len(outputs) == 1:
        t = outputs[0]
        s = memo.get(t)
        if s is None:
            s = memo[t] = type_text(t)
        return s
    return "(" + ", ".join(types_text([t], memo) for t in outputs) + ")"


def value_text(v, what: str = "attribute") -> str:
    """An attribute value: none, true/false, ints, floats (repr: exact), strings, lists, (tuples,),
    {key=value} mappings, numpy arrays as dense<...>, control-flow bodies as body<"LABEL"> and TF library
    functions as function<"NAME">."""
    if v is None:
        return "none"
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return repr(v)  # 'inf', '-inf' and 'nan' read back as floats too
    if t is str or isinstance(v, str):  # (a str subclass, numpy's str_: as its text)
        return quote(str(v))
    if t is Body:  # a control-flow body: its label (the graph it carries is the loader's)
        return f"body<{quote(v.label)}>"
    if t is TFFunction:  # a TF library function: its name (the FunctionDef it carries is the loader's)
        return f"function<{quote(v.name)}>"
    if t is list or t is FrozenList:
        return "[" + ", ".join(value_text(x, what) for x in v) + "]"
    if t is tuple:
        return "(" + ", ".join(value_text(x, what) for x in v) + ("," if len(v) == 1 else "") + ")"
    if t is dict or t is FrozenDict:
        parts = []
        for k, x in v.items():
            if type(k) is not str:
                return _unwritable(k, what)
            parts.append(f"{word_or_quoted(k)}={value_text(x, what)}")
        return "{" + ", ".join(parts) + "}"
    if t is bytes:
        return bytes_text(v)
    if t.__name__ == "ndarray" and t.__module__ == "numpy":
        return dense_text(v, what)
    return _unwritable(v, what)


def _unwritable(v, what: str) -> str:
    from ..errors import XcvizError

    raise XcvizError(f"{what} holds a {type(v).__name__}, which the text form cannot write",
                     hint="attribute values are None, bool, int, float, str, bytes, lists, tuples, "
                          "str-keyed dicts and numpy arrays")


def bytes_text(b: bytes) -> str:
    return 'b"' + "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\x{c:02x}" for c in b) + '"'


def dense_text(a, what: str = "constant") -> str:
    """`dense<f32[2,2] [[1.0, 2.0], [3.0, 4.0]]>`, or `dense<f32[64,64] 0x...>` (little-endian bytes)."""
    import numpy as np

    name = a.dtype.name
    if a.dtype == object:
        dtype = "object"
    else:
        dtype = SHORT_DTYPES.get(name) or (name if name in DTYPE_SIZES else None)
        if dtype is None:
            return _unwritable(a, what)
    head = f"dense<{dtype}[{','.join(str(d) for d in a.shape)}] "
    if dtype == "object":
        if not all(type(x) in (str, bytes) for x in a.flat):
            return _unwritable(a, what)
        return head + _body(a.tolist(), lambda x: quote(x) if type(x) is str else bytes_text(x)) + ">"
    if a.size <= DECIMAL_MAX and a.dtype.kind in "biuf":
        if a.dtype.kind == "b":
            return head + _body(a.tolist(), lambda x: "true" if x else "false") + ">"
        if a.dtype.kind in "iu":
            return head + _body(a.tolist(), str) + ">"
        if name in ("float16", "float32", "float64"):
            text = a.astype(str)  # numpy's shortest digits that read back as the same value of this dtype
            flat = text.ravel().tolist()
            back = np.array([float(x) for x in flat], dtype=a.dtype)
            if back.tobytes() == np.ascontiguousarray(a).ravel().tobytes():  # (NaN payloads go to hex)
                return head + _body(text.tolist(), str) + ">"
    raw = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes().hex()
    step = 2 * HEX_LINE
    if len(raw) <= step:
        return head + "0x" + raw + ">"
    return head + "0x\n" + "\n".join(ROW_INDENT + raw[k:k + step] for k in range(0, len(raw), step)) + ">"


def _nested(x, leaf: Callable) -> str:
    if type(x) is list:
        return "[" + ", ".join(_nested(y, leaf) for y in x) + "]"
    return leaf(x)


def _body(x, leaf: Callable) -> str:
    """Nested decimals on one line, or when long, one line per row (per ROW_ITEMS values for a vector)."""
    one = _nested(x, leaf)
    if len(one) <= ROW_MAX or type(x) is not list:
        return one
    if x and type(x[0]) is list:
        rows = [_nested(r, leaf) for r in x]
    else:
        items = [leaf(v) for v in x]
        rows = [", ".join(items[k:k + ROW_ITEMS]) for k in range(0, len(items), ROW_ITEMS)]
    return "[\n" + ",\n".join(ROW_INDENT + r for r in rows) + "]"


def props_text(node) -> str:
    """The node's own fields as ` [key=value, ...]`, or '' when all are defaults."""
    props = []
    if node.device is not None:
        props.append(f"device={quote(node.device)}")
    if node.scope is not None:
        props.append(f"scope={quote(node.scope)}")
    if node.compile is not None:
        props.append("compile=true" if node.compile else "compile=false")
    if node.op_type != node.op:
        props.append(f"op_type={quote(node.op_type)}")
    if node.note is not None:
        props.append(f"note={quote(node.note)}")
    if node.module is not None:
        props.append(f"module={quote(node.module)}")
    return " [" + ", ".join(props) + "]" if props else ""


def node_text(node, memo: dict) -> str:
    """One node as a line (no indent, no comment)."""
    args = [ref_text(r) for r in node.inputs]
    args += ["^%" + name_text(c) for c in node.control_inputs]
    text = f"%{name_text(node.name)}: {types_text(node.outputs, memo)} = {word_or_quoted(node.op)}({', '.join(args)})"
    if node.attrs:
        what = f"attribute of node {node.name!r}"
        text += " {" + ", ".join(f"{word_or_quoted(k) if type(k) is str else _unwritable(k, what)}={value_text(v, what)}"
                                 for k, v in node.attrs.items()) + "}"
    return text + props_text(node)


def cluster_comments(clustering) -> list[str]:
    """`cluster_k` or `fallback: <reason>` per node, from a Clustering."""
    ids = [clustering.cluster_id(k) for k in range(len(clustering.clusters))]
    return [ids[k] if k >= 0 else f"fallback: {escape(reason or 'not clustered')}"
            for k, reason in zip(clustering.cluster_of, clustering.reason)]


def header_text(graph, weights: bool = True) -> str:
    params = []
    for v in graph.inputs:
        if not weights and v.data is not None:
            continue
        p = f"%{name_text(v.name)}: {type_text(v.type)}"
        if v.data is not None:
            p += " = " + value_text(v.data, f"data of input {v.name!r}")
        params.append(p)
    props = ""
    if graph.dims:
        props = " [dims={" + ", ".join(f"{word_or_quoted(k)}={value_text(d, 'a dimension')}"
                                        for k, d in graph.dims.items()) + "}]"
    one_line = f"graph {word_or_quoted(graph.name)}({', '.join(params)}){props} {{"
    if len(one_line) <= COMMENT_COLUMN_MAX and "\n" not in one_line:
        return one_line
    return f"graph {word_or_quoted(graph.name)}(\n" + ",\n".join("    " + p for p in params) + f"\n){props} {{"


def return_text(graph) -> str:
    names = graph.output_names
    outs = []
    for ref in graph.outputs:
        own = names.get(ref)
        outs.append(ref_text(ref) if own is None else f"{ref_text(ref)} as {quote(own)}")
    return "  return" + (" " + ", ".join(outs) if outs else "")


# The first line of a text printed without its weights: read_graph refuses such a text by it (a graph
# whose weights were quietly data-less inputs would cost and run differently from the model).
NO_WEIGHTS_MARK = "# weights left out"


def weight_lines(graph) -> list[str]:
    """`# weight %conv1.weight: f32[64,3,7,7] (37.6 KiB)`: one summary line per input that holds data."""
    return [f"# weight %{name_text(v.name)}: {type_text(v.type)} ({byte_size(v.data.nbytes)})"
            for v in graph.inputs if v.data is not None and hasattr(v.data, "nbytes")]


def byte_size(n: int) -> str:
    """Bytes as people read them: 512 B, 37.6 KiB, 1.2 GiB (render.units.fmt_bytes uses it too)."""
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
    return f"{n} B"  # (not reached)


def print_graph(graph, clustering=None, weights: bool = True) -> str:
    """The graph as text; with a Clustering, each node's cluster or fallback reason as a trailing comment.

    `weights=False`: inputs holding data (weights, initializers) are left out of the header and summed up
    one line each after the graph, so the nodes come first; the text says so on its first line and does
    not read back (print with weights for a text that does)."""
    if not weights and any(v.data is not None for v in graph.inputs):
        summary = weight_lines(graph)
        total = sum(getattr(v.data, "nbytes", 0) for v in graph.inputs if v.data is not None)
        n = sum(v.data is not None for v in graph.inputs)
        head = (f"{NO_WEIGHTS_MARK} ({n} tensor{'s' if n != 1 else ''}, {byte_size(total)}, listed after the graph): "
                "this text does not read back; `xcviz print --weights` writes one that does\n")
        return head + _graph_text(graph, clustering, False) + "\n".join(summary) + "\n"
    return _graph_text(graph, clustering, True)


def _graph_text(graph, clustering, weights: bool) -> str:
    memo: dict = {}
    lines = [node_text(node, memo) for node in graph.nodes]
    if clustering is not None:
        comments = cluster_comments(clustering)
        width = max((len(s) for s in lines if len(s) <= COMMENT_COLUMN_MAX), default=0)
        lines = [f"{s:<{width}}  # {c}" for s, c in zip(lines, comments)]
    body = "\n".join("  " + s for s in lines)
    return header_text(graph, weights) + "\n" + (body + "\n" if lines else "") + return_text(graph) + "\n}\n"


WINDOW_LINE_MAX = 160


def window(graph, node_index: int, radius: int = 2) -> str:
    """The lines of the nodes around node `node_index` (marked with `>`), for messages; never raises on
    a half-built graph and cuts long lines."""
    from ..errors import XcvizError

    nodes = graph.nodes
    lo, hi = max(0, node_index - radius), min(len(nodes), node_index + radius + 1)
    memo: dict = {}
    out = ["  ..."] if lo > 0 else []
    for j in range(lo, hi):
        try:
            s = node_text(nodes[j], memo)
        except (XcvizError, TypeError, ValueError, AttributeError):
            s = f"%{name_text(str(nodes[j].name))} = {word_or_quoted(str(nodes[j].op))}(...)"
        if "\n" in s:  # a long constant spreads over lines: a message shows its first
            s = s[:s.index("\n")] + " …"
        if len(s) > WINDOW_LINE_MAX - 2:
            s = s[:WINDOW_LINE_MAX - 3] + "…"
        out.append(("> " if j == node_index else "  ") + s)
    if hi < len(nodes):
        out.append("  ...")
    return "\n".join(out)
