"""`xcviz ops PATTERN`: the registry entries a name, glob or substring matches, by framework, and their views."""
from __future__ import annotations

import fnmatch

from rich.console import Group
from rich.text import Text

from ..errors import XcvizError
from .tables import FALLBACK

FRAMEWORKS = ("onnx", "tf", "aten")


def _names(op) -> list[str]:
    return [op.name, *op.aliases]


def _onnx_names() -> set[str] | None:
    """The op types ONNX defines (any domain), or None where onnx is not installed."""
    try:
        from onnx import defs
    except ImportError:
        return None
    return {s.name for s in defs.get_all_schemas_with_history()}


def in_framework(op, framework: str | None, onnx_names: set[str] | None) -> bool:
    """Whether a registry entry is an op of `framework`: TensorFlow's are `tf.*`; ONNX's carry an ONNX op
    type as name or alias (every non-TF entry where onnx is not installed)."""
    if framework is None:
        return True
    tf = op.name.startswith("tf.")
    if framework == "tf":
        return tf
    return not tf and (onnx_names is None or any(n in onnx_names for n in _names(op)))


def matches(names: list[str], pattern: str | None) -> bool:
    if pattern is None:
        return True
    p = pattern.lower()
    if any(c in pattern for c in "*?["):
        return any(fnmatch.fnmatchcase(n.lower(), p) for n in names)
    return any(p in n.lower() for n in names)


def select(registry, pattern: str | None, framework: str | None, unsupported: bool, devices: tuple[str, ...]) -> list:
    """The entries to show: an exact name or alias (any case) when one is given, else those the glob or
    substring matches; of the framework; with --unsupported those XLA does not compile on a device shown."""
    onnx_names = _onnx_names() if framework == "onnx" else None
    pool = [op for op in registry if in_framework(op, framework, onnx_names)
            and (not unsupported or not all(op.compilable_on(d) for d in devices))]
    if pattern is not None and not any(c in pattern for c in "*?["):
        p = pattern.lower()
        exact = [op for op in pool if p in (n.lower() for n in _names(op)) or op.name.lower() == "tf." + p]
        if exact:
            return exact
    found = [op for op in pool if matches(_names(op), pattern)]
    if not found and pattern is not None:
        from ..errors import did_you_mean

        every = [n for op in pool for n in _names(op)]
        raise XcvizError(f"no op matches {pattern!r}" + (f" in {framework}" if framework else "")
                         + (" that XLA does not compile" if unsupported else ""),
                         hint=did_you_mean(pattern, every) or "a glob works too: xcviz ops 'conv*'")
    return found


def select_aten(rows: list[dict], pattern: str | None, unsupported: bool, devices: tuple[str, ...]) -> list[dict]:
    """The aten table's rows the pattern matches (by aten name, with or without `aten.`, or xcviz op)."""
    out = [r for r in rows if matches([r["aten"], r["aten"][5:], r["op"]], pattern)
           and (not unsupported or not all(r[d] for d in devices))]
    if not out and pattern is not None:
        raise XcvizError(f"no aten op matches {pattern!r}", hint="see `xcviz ops --framework aten`")
    return out


def op_card(op, devices: tuple[str, ...]) -> Group:
    """One op in full: names, per device whether XLA compiles it (and why not), where that comes from."""
    lines = [Text(op.name, style="bold")]
    if op.aliases:
        lines.append(Text(f"  aliases: {', '.join(op.aliases)}"))
    for d in devices:
        ok = op.compilable_on(d)
        line = Text(f"  {d}: ")
        line.append("XLA compiles it" if ok else f"not compiled: {op.why_not(d)}", style="green" if ok else FALLBACK)
        lines.append(line)
    lines.append(Text(f"  source: {op.source}"))
    if op.groups:
        lines.append(Text(f"  groups: {', '.join(sorted(op.groups))}"))
    if op.doc:
        lines.append(Text(f"  note: {op.doc}"))
    return Group(*lines)


def op_lines(ops: list, devices: tuple[str, ...]) -> str:
    """One tab-separated line per op (for pipes: grep, cut, sort): name, aliases, a verdict per device, source."""
    head = "\t".join(["op", "aliases", *devices, "source"])
    rows = ["\t".join([op.name, ",".join(op.aliases) or "-",
                       *("yes" if op.compilable_on(d) else "no" for d in devices), op.source]) for op in ops]
    return "\n".join([head, *rows]) + "\n"


def aten_lines(rows: list[dict], devices: tuple[str, ...]) -> str:
    return "\n".join(["\t".join(["aten op", "xcviz op", *devices])] +
                     ["\t".join([r["aten"], r["op"], *("yes" if r[d] else "no" for d in devices)]) for r in rows]) + "\n"
