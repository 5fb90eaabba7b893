"""YAML and JSON text -> Python data, safely and within limits (docs/limits.md); where in the text an error is."""
from __future__ import annotations

import json
from typing import Any

import yaml

from ..errors import XcvizError
from ..ir import short


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Resource limits for untrusted files (docs/limits.md); the CLI raises them with --max-depth / --max-alias-expansion.
DEFAULT_MAX_DEPTH = 100                  # nesting of lists/mappings (documents and attribute values)
DEFAULT_MAX_ALIAS_EXPANSION = 1_000_000  # objects that YAML aliases would create when expanded ("billion laughs")
# libyaml's C composer recurses once per nesting level and crashes the process somewhere past ~30,000 levels:
# a document that *might* nest deeper than this, or that uses aliases, is scanned (events only) before composing.
_SAFE_NESTING = 2_000


class _StrictLoader(_Loader):  # type: ignore[misc, valid-type]
    """Safe loader that refuses duplicate keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader, node, deep=False):
    loader.flatten_mapping(node)
    mapping = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise XcvizError("mapping key is not a string", where=f"{key_node.start_mark.line + 1}:{key_node.start_mark.column + 1}",
                             hint="quote the key") from None
        if key in mapping:
            raise XcvizError(f"duplicate key {short(key)}", where=f"{key_node.start_mark.line + 1}:{key_node.start_mark.column + 1}",
                             hint="each key may appear once per mapping")
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _might_be_hostile(text: str, max_depth: int) -> bool:
    """Cheap, sound pre-check: False only if the text can neither nest deeper than allowed nor use aliases."""
    if "*" in text:
        return True
    bound = text.count("[") + text.count("{")  # flow nesting can not exceed the number of openers
    if bound > min(max_depth, _SAFE_NESTING):
        return True
    # block nesting: at most two levels per column of indentation plus the indicators on one line
    return 3 * max(map(len, text.split("\n"))) + 2 + bound > _SAFE_NESTING


def _scan_yaml(text: str, source: str, max_depth: int, max_alias_expansion: int) -> None:
    """Refuse deep nesting and alias bombs from the event stream, before anything is composed or built."""
    from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, ScalarEvent

    frames: list[list] = [[None, 0]]  # [anchor, expanded object count] per open collection
    sizes: dict[str, int] = {}
    expanded = 0
    try:
        for ev in yaml.parse(text, Loader=_Loader):
            if isinstance(ev, ScalarEvent):
                frames[-1][1] += 1
                if ev.anchor:
                    sizes[ev.anchor] = 1
            elif isinstance(ev, CollectionStartEvent):
                if len(frames) > max_depth:
                    m = ev.start_mark
                    raise XcvizError(f"YAML nests deeper than {max_depth} levels", where=f"{source}:{m.line + 1}:{m.column + 1}",
                                     hint="flatten the data, or raise the limit with --max-depth")
                frames.append([ev.anchor, 1])
            elif isinstance(ev, CollectionEndEvent):
                anchor, n = frames.pop()
                frames[-1][1] += n
                if anchor:
                    sizes[anchor] = n
            elif isinstance(ev, AliasEvent):
                m = ev.start_mark
                if any(f[0] == ev.anchor for f in frames):
                    raise XcvizError(f"YAML alias *{ev.anchor} refers to a collection that contains it",
                                     where=f"{source}:{m.line + 1}:{m.column + 1}", hint="recursive data is not allowed")
                n = sizes.get(ev.anchor, 1)
                expanded += n
                frames[-1][1] += n
                if expanded > max_alias_expansion:
                    raise XcvizError(f"YAML aliases expand to more than {max_alias_expansion} objects (an alias bomb?)",
                                     where=f"{source}:{m.line + 1}:{m.column + 1}",
                                     hint="write the data out, or raise the limit with --max-alias-expansion")
    except yaml.MarkedYAMLError as e:
        if "nesting depth" in str(e.problem or ""):  # libyaml >= 0.2.6 stops at its own limit (1,000)
            m = e.problem_mark
            raise XcvizError(f"YAML nests deeper than {max_depth} levels", where=f"{source}:{m.line + 1}:{m.column + 1}",
                             hint="flatten the data, or raise the limit with --max-depth") from None
        return  # malformed: the real parse below reports it with its position
    except yaml.YAMLError:
        return


def parse_yaml(text: str, source: str, *, max_depth: int = DEFAULT_MAX_DEPTH,
               max_alias_expansion: int = DEFAULT_MAX_ALIAS_EXPANSION) -> Any:
    if _might_be_hostile(text, max_depth):
        _scan_yaml(text, source, max_depth, max_alias_expansion)
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except XcvizError as e:
        e.where = f"{source}:{e.where}" if e.where else source
        raise
    except RecursionError:
        raise XcvizError("YAML nests too deeply", where=source, hint="flatten the data") from None
    except (ValueError, OverflowError) as e:  # e.g. an integer with more digits than Python converts
        raise XcvizError(f"malformed YAML value: {e}"[:300], where=source, hint="check numbers and tagged values") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = (e.problem or e.context or "malformed YAML").strip()
        hint = "YAML tags that construct Python objects are refused" if "constructor" in problem else "check indentation, colons and quotes"
        raise XcvizError(f"malformed YAML: {problem}", hint=hint, where=where) from None
    except yaml.YAMLError as e:
        raise XcvizError(f"malformed YAML: {e}", where=source, hint="check indentation, colons and quotes") from None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise XcvizError(f"duplicate key {k!r}", hint="each key may appear once per object")
        out[k] = v
    return out


def _count_keys(obj: Any) -> int:
    """Keys in every mapping of a parsed document (iterative: documents may nest deeply)."""
    total = 0
    stack = [obj]
    pop, push = stack.pop, stack.extend
    while stack:
        o = pop()
        if type(o) is dict:
            total += len(o)
            push([v for v in o.values() if type(v) is dict or type(v) is list])
        elif type(o) is list:
            push([v for v in o if type(v) is dict or type(v) is list])
    return total


def _parse_json_fast(text: str, raw: bytes | None = None) -> tuple[Any, int] | None:
    """msgspec's decoder, when it provably gives what the strict parser gives: (document, keys the text
    names), or None for "use the strict parser".

    msgspec keeps the last of duplicate keys, so duplicates are detected by counting, which is left to the
    caller (check_keys, or graph_from_mapping as it reads the nodes): without a backslash in the text every
    '"' delimits a string, so each key is exactly one '"' followed by ':' (after optional blanks), and the
    parsed document must hold as many keys as the text names. Like the strict parser, msgspec reads big
    integers as int; it refuses NaN/Infinity and numbers beyond a float's range, and any refusal falls back
    to the strict parser for its message."""
    if "\\" in text:
        return None
    import msgspec

    try:
        obj = msgspec.json.decode(text)
    except (msgspec.MsgspecError, RecursionError):
        return None
    # JSON's blanks are space, tab, CR and LF: without them every key ends in '":' (strings hold no '"')
    return obj, (raw if raw is not None else text.encode()).translate(None, b" \t\r\n").count(b'":')


def parsed_keys(obj: Any) -> int:
    """Keys in every mapping of a document parsed from text without backslashes: counted in msgspec's
    compact re-serialisation (no blanks, and strings come back verbatim, holding no '"'), at C speed."""
    import msgspec

    try:
        return msgspec.json.encode(obj).count(b'":')
    except (msgspec.MsgspecError, RecursionError, TypeError, ValueError):  # (deep documents) the slow way
        return _count_keys(obj)


def parse_json_unchecked(text: str, source: str, raw: bytes | None = None) -> tuple[Any, int | None]:
    """Parse JSON text, leaving duplicate keys for the caller to rule out: (document, keys the text names),
    to be compared with the keys the document holds (check_keys; graph_from_mapping does it while it
    reads the nodes, which saves a pass over a big document). Keys is None when the strict parser ran and
    refused duplicates itself."""
    fast = _parse_json_fast(text, raw)
    return fast if fast is not None else (_parse_json_strict(text, source), None)


def check_keys(obj: Any, keys: int | None, text: str, source: str) -> None:
    """After parse_json_unchecked: raise the strict parser's error (with its line) if a key is repeated."""
    if keys is not None and parsed_keys(obj) != keys:
        _parse_json_strict(text, source)  # raises, naming the first repeated key
        raise XcvizError("duplicate key", where=source, hint="each key may appear once per object")


def _parse_json_strict(text: str, source: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except RecursionError:
        raise XcvizError("JSON nests too deeply", where=source, hint="flatten the data") from None
    except json.JSONDecodeError as e:
        raise XcvizError(f"malformed JSON: {e.msg}", where=f"{source}:{e.lineno}:{e.colno}",
                         hint="check commas, brackets and quotes") from None
    except ValueError as e:
        where = source
        if "is not valid JSON" in str(e):  # NaN / Infinity: point at the first bare one (error path only)
            import re

            m = re.search(r"(?<![\w\"])-?(NaN|Infinity)(?![\w\"])", text)
            if m:
                where = f"{source}:{text.count(chr(10), 0, m.start()) + 1}:{m.start() - text.rfind(chr(10), 0, m.start())}"
        raise XcvizError(f"malformed JSON: {e}"[:300], where=where, hint="JSON has no NaN or Infinity; use null or a number") from None
    except XcvizError as e:
        e.where = _json_duplicate_where(text, source)
        raise


def _nesting(text: str) -> int:
    """How deep the brackets of a text nest, double-quoted strings skipped (error path only)."""
    bound = text.count("[") + text.count("{")
    if bound <= _SAFE_NESTING:
        return bound
    import re

    import numpy as np

    bare = np.frombuffer(re.sub(r'"(?:[^"\\]|\\.)*"', '""', text).encode("utf-8", "replace"), np.uint8)
    step = ((bare == ord("[")) | (bare == ord("{"))).astype(np.int64) - ((bare == ord("]")) | (bare == ord("}")))
    return int(np.cumsum(step).max(initial=0))


def _compose(text: str):
    """The text's YAML node tree (JSON is YAML flow syntax), to find where things are (error path only);
    None if it does not read, or nests past _SAFE_NESTING levels, where libyaml's recursion would
    overflow the C stack."""
    if _nesting(text) > _SAFE_NESTING:
        return None
    try:
        return yaml.compose(text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def _json_duplicate_where(text: str, source: str) -> str:
    """file:line:col of the first repeated key (error path only)."""
    if len(text) > 8 * 1024**2:
        return source
    root = _compose(text)
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    if k.value in seen:
                        return f"{source}:{k.start_mark.line + 1}:{k.start_mark.column + 1}"
                    seen.add(k.value)
                stack.append(v)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    return source


# ---- error path only: where in the text is the thing an error names? ---------------------------
def _doc_path(e: XcvizError, data: Any, source: str) -> tuple | None:
    """("nodes", 3) for an error about node 'x' or nodes[3]; ("inputs", i) for input 'x' or inputs[i]; ("outputs",) for graph outputs."""
    import re

    where = e.where or ""
    prefix = f"{source}: "
    if not where.startswith(prefix) or not isinstance(data, dict):
        return ("outputs",) if e.message.startswith("graph output") else None
    what = where[len(prefix):]
    m = re.fullmatch(r"(nodes|inputs)\[(\d+)\]", what)
    if m:
        return (m.group(1), int(m.group(2)))
    if what.startswith("input ") and isinstance(data.get("inputs"), list):
        label = what[len("input "):]
        hits = [i for i, v in enumerate(data["inputs"])
                if short(v.get("name") if isinstance(v, dict) else v) == label]
        if hits:
            return ("inputs", hits[0])
    if what.startswith("node ") and isinstance(data.get("nodes"), list):
        label = what[len("node "):]
        hits = [i for i, nd in enumerate(data["nodes"])
                if isinstance(nd, dict) and isinstance(nd.get("name"), str) and short(nd["name"]) == label]
        if hits:  # a duplicate is reported where it is repeated
            return ("nodes", hits[-1] if e.message.startswith("duplicate node name") else hits[0])
    if what in ("outputs", "nodes", "inputs", "dims"):
        return (what,)
    return None


def add_line(e: XcvizError, data: Any, text: str, source: str) -> None:
    """Turn `file: node 'x'` into `file:12:5: node 'x'` by re-reading the text's structure (errors only)."""
    path = _doc_path(e, data, source)
    if not path:
        return
    node = _compose(text)
    for key in path:
        if isinstance(node, yaml.MappingNode) and isinstance(key, str):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            return
        if node is None:
            return
    m = node.start_mark
    where = e.where or source
    rest = where[len(source):] if where.startswith(source) else ""
    e.where = f"{source}:{m.line + 1}:{m.column + 1}{rest}"
