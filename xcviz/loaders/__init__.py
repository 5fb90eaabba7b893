"""Read a graph file of any supported format: read, detect the format, parse, build (the passes that make it whole are passes.prepare)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable

from ..errors import XcvizError
from ..ir import Graph, gc_paused
from ..passes.columns import Gathered
from ..memory import BIG_FILE_BYTES, keep_freed_memory
from .parse import DEFAULT_MAX_ALIAS_EXPANSION, DEFAULT_MAX_DEPTH

DEFAULT_MAX_FILE_BYTES = 2 * 1024**3


def read_file(path: str, max_bytes: int) -> bytes:
    if not os.path.exists(path):
        raise XcvizError("file not found", where=path, hint="check the path; example graphs live in graphs/")
    if os.path.isdir(path):
        raise XcvizError("is a directory, not a graph file", where=path, hint="give the graph file inside it")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise XcvizError(f"file is {size} bytes, over the limit of {max_bytes}", where=path,
                         hint="raise it with --max-file-bytes")
    if size >= BIG_FILE_BYTES:
        keep_freed_memory()
    try:
        with open(path, "rb") as f:
            # bounded even for pipes and devices, whose size reads as 0; never a buffer of the limit's size
            # (read(n) reserves n bytes first: 2 GiB of address space for a 5 kB file)
            data = f.read(size + 1) if size else read_stream(f, max_bytes + 1)
    except OSError as e:
        raise XcvizError(f"cannot read file: {e.strerror}", where=path, hint="check the file's permissions") from None
    if len(data) > max_bytes:
        raise XcvizError(f"file is over the limit of {max_bytes} bytes", where=path, hint="raise it with --max-file-bytes")
    return data


def read_graph_bytes(path: str, max_bytes: int) -> bytes:
    """A graph file's bytes, gunzipped when it is gzip (`model.pb.gz`, `graph.json.gz`): the unpacked size is
    bounded by the same limit as a file's, checked while unpacking (a gzip bomb stops at the limit)."""
    data = read_file(path, max_bytes)
    if data[:2] != b"\x1f\x8b":
        return data
    import zlib

    unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = unpack.decompress(data, max_bytes + 1)
    except zlib.error as e:
        raise XcvizError(f"not a valid gzip file ({e})", where=path, hint="the file may be truncated") from None
    if len(out) > max_bytes or unpack.unconsumed_tail:
        raise XcvizError(f"gzip file unpacks to over the limit of {max_bytes} bytes", where=path,
                         hint="raise it with --max-file-bytes")
    if not unpack.eof:
        raise XcvizError("gzip file ends early", where=path, hint="the file may be truncated")
    return out


def _unzipped_name(path: str) -> str:
    """The name that says a gzipped file's format: `model.pb.gz` reads as `model.pb`."""
    return path[:-3] if path.lower().endswith(".gz") else path


def read_stream(f, limit: int) -> bytes:
    """Up to `limit` bytes of a stream, read in chunks of 1 MiB (no buffer of the limit's size reserved)."""
    chunks, n = [], 0
    while n < limit:
        chunk = f.read(min(1 << 20, limit - n))
        if not chunk:
            break
        chunks.append(chunk)
        n += len(chunk)
    return b"".join(chunks)


# the text form: `graph NAME(` after any blank or comment lines
_XCIR_HEAD = re.compile(rb'(?:[ \t\r\n]|#[^\n]*\n)*graph[ \t]+(?:[A-Za-z_][A-Za-z0-9_.]*|"[^"\n]*")[ \t]*\(')


def detect_format(path: str, data: bytes) -> str:
    """'yaml', 'json', 'xcir', 'onnx' (binary), 'torch' (.pt2) from the suffix, falling back on the content."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".pbtxt", ".pbtext") or (ext == ".pb" and data[:1] == b"\x0a"):
        return "tensorflow"  # (a GraphDef opens with field 1, node; an ONNX model with field 1, ir_version)
    if ext == ".pt2":
        return "torch"
    if ext in (".onnx", ".pb"):
        return "onnx"
    if ext in (".yaml", ".yml"):
        return "yaml"
    if ext == ".json":
        return "json"
    if ext == ".xcir" or _XCIR_HEAD.match(data[:4096]):
        return "xcir"
    head = data[:64].lstrip()
    if head.startswith((b"{", b"[")):
        return "json"
    if b"\x00" in data[:1024] or (data[:1] and data[0] == 0x08):
        return "onnx"
    return "yaml"


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise XcvizError(f"file is not valid UTF-8 (byte {e.start})", where=path,
                         hint="graph files are UTF-8 text, or binary .onnx models") from None


# Past this size an error message goes without a line number (finding it means re-reading the whole file).
_LINE_LOOKUP_MAX_CHARS = 8 * 1024**2


@dataclass(frozen=True)
class Read:
    """A graph file as a loader read and built it: the Graph before the passes (passes.prepare) make it whole,
    and what they need from the loader. `gathered`: what it gathered on its way through the nodes
    (passes.columns.Gathered); `locate(error)`: a passes' error with where in the file it is; `again()`: for
    a fast read, the file read again the generic way, whose errors say where (None: this one does)."""

    graph: Graph
    allow_unknown: bool
    onnx: bool
    gathered: Gathered | None = None
    locate: Callable[[XcvizError], XcvizError] | None = None
    again: Callable[[], "Read"] | None = None


def read(path: str, *, allow_unknown: bool = False, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
         max_nodes: int | None = None, max_depth: int = DEFAULT_MAX_DEPTH,
         max_alias_expansion: int = DEFAULT_MAX_ALIAS_EXPANSION, max_elements: int | None = None,
         signature: str | None = None, trust_pickle: bool = False) -> Read:
    """Read, detect the format, parse and build: the graph as the file has it, before the passes. Never
    executes anything from the file unless `trust_pickle` (a .pt2 that xcviz's own reader cannot read goes to
    torch.export.load, which unpickles: it runs code from the file).

    Bad input raises XcvizError; the limits (docs/limits.md) bound memory and time for hostile files."""
    # The cyclic GC rescans every live object each few thousand allocations: with millions of nodes that
    # made loading several times slower (nothing built here forms a cycle).
    with gc_paused():
        from .budget import Limits, loading
        from .tensorflow.savedmodel import saved_model_file

        with loading(Limits(max_file_bytes, max_elements, max_depth, str(path))):
            if saved_model_file(str(path)):  # a SavedModel directory (or its saved_model.pb)
                from .tensorflow import load_saved_model

                return counted(Read(load_saved_model(str(path), signature, max_file_bytes), True, False), max_nodes)
            return counted(_read(str(path), allow_unknown, max_file_bytes, max_nodes, max_depth,
                                 max_alias_expansion, max_elements, trust_pickle), max_nodes)


def counted(r: Read, max_nodes: int | None) -> Read:
    """The read, refused when it holds more nodes than the limit."""
    if max_nodes is not None and len(r.graph.nodes) > max_nodes:
        raise XcvizError(f"graph has {len(r.graph.nodes)} nodes, over the limit of {max_nodes}", where=r.graph.source,
                         hint="raise it with --max-nodes")
    return r


def _read(path: str, allow_unknown: bool, max_file_bytes: int, max_nodes: int | None, max_depth: int,
          max_alias_expansion: int, max_elements: int | None, trust_pickle: bool = False) -> Read:
    data = read_graph_bytes(path, max_file_bytes)
    if not data or data.isspace():  # (no stripped copy of a big file)
        raise XcvizError("file is empty", where=path, hint="a graph needs at least `nodes:`")
    fmt = detect_format(_unzipped_name(path), data)
    if fmt == "torch":  # (opaque aten ops keep the loader's reason, as ONNX ones do)
        from .budget import Limits
        from .torch_export import graph_from_program, program_for_graph

        del data
        program = program_for_graph(path, trust_pickle, Limits(max_file_bytes, max_elements, max_depth, path))
        return Read(graph_from_program(program, path), True, True)
    if fmt == "xcir":
        from .xcir import graph_from_text

        return Read(graph_from_text(_decode(data, path), path, allow_unknown, max_depth), True, True)
    if fmt == "tensorflow":
        from .tensorflow import graph_from_graphdef, read_graphdef

        text = not data[:1] == b"\x0a" or _unzipped_name(path).endswith("txt")
        graph = graph_from_graphdef(read_graphdef(path, data, text), path)
        return Read(graph, True, False)
    if fmt == "onnx":
        from .onnx_model import graph_from_model, read_onnx_bytes

        model = read_onnx_bytes(data, path, os.path.dirname(os.path.abspath(path)))
        return Read(graph_from_model(model, path), True, True)
    if fmt == "json" and b"\\" not in data:  # (escapes: the scanner reads each string as its bytes)
        from . import json_scanned

        box = [data]  # (json_scanned.read lets the bytes go once read: their memory serves the rest of the load)
        del data
        scanned = json_scanned.read(box, path, max_nodes, max_depth)
        if scanned is not None:
            def again() -> Read:  # (rare) read again the generic way, which says where in the file
                return _read_text(read_graph_bytes(path, max_file_bytes), path, fmt, allow_unknown, max_nodes, max_depth,
                                  max_alias_expansion)

            return Read(scanned[0], allow_unknown, False, scanned[1], again=again)
        data = box[0] if box else read_graph_bytes(path, max_file_bytes)  # (bad input found after the bytes went)
    return _read_text(data, path, fmt, allow_unknown, max_nodes, max_depth, max_alias_expansion)


def _read_text(data: bytes, path: str, fmt: str, allow_unknown: bool, max_nodes: int | None, max_depth: int,
               max_alias_expansion: int) -> Read:
    """A YAML or JSON graph (xcviz's schema, or an ONNX model as JSON), the generic way."""
    text = _decode(data, path)
    from . import parse, schema

    keys = None  # JSON: the keys its text names, until the parsed document is seen to hold them all
    if fmt == "json":
        obj, keys = parse.parse_json_unchecked(text, path, data)
    else:
        obj = parse.parse_yaml(text, path, max_depth=max_depth, max_alias_expansion=max_alias_expansion)
    del data  # (memory for what follows: the raw bytes, as big as the file, are not read again)
    if isinstance(obj, dict) and ("graph" in obj or "irVersion" in obj or "opsetImport" in obj) and "nodes" not in obj:
        from .onnx_model import graph_from_model, read_onnx_json

        parse.check_keys(obj, keys, text, path)
        return Read(graph_from_model(read_onnx_json(obj, text, path), path), True, True)
    lookup = len(text) <= _LINE_LOOKUP_MAX_CHARS

    def locate(e: XcvizError) -> XcvizError:
        """The error as the file has it: a repeated key first (as the strict parser has it), then the line."""
        if keys is not None:
            parse.check_keys(obj, keys, text, path)
        if lookup:
            parse.add_line(e, obj, text, path)
        return e

    try:
        # (counts the document's keys on its way through the nodes)
        graph, gathered = schema.read_mapping(obj, path, max_nodes, max_depth, keys)
    except XcvizError as e:
        raise locate(e)
    keys = None
    if not lookup:  # free the parsed document and the text now, so that their memory serves the passes
        del obj, text
        return Read(graph, allow_unknown, False, gathered)
    return Read(graph, allow_unknown, False, gathered, locate=locate)
