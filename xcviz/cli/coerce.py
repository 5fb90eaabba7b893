"""Flag values typer would hand to pydantic, converted without it where the result is certain.

typer (0.2x) converts every parameter's value, defaults included, through a pydantic TypeAdapter built per
parameter on first use: importing pydantic and building an adapter per parameter were a large part of every
command's start. The values xcviz's commands take are plain: a str, an int (maybe with a lower bound), a list of str,
a bool. For those, a value already of its type, or a decimal integer written the canonical way within its
bounds, converts to exactly what the adapter would return; anything else (a bad integer, an enum, an
out-of-range number) goes to typer's own adapter, so every message stays typer's."""
from __future__ import annotations

import re

_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")

try:  # typer's runtime coercion layer; older typers convert with click's types and need nothing here
    from typer._coercion import RuntimeParam as _RuntimeParam
    from typer._coercion import build_runtime_param as _build_runtime_param
except ImportError:  # pragma: no cover - depends on the installed typer
    _RuntimeParam = None


def install(params) -> None:
    """Give each typer parameter in `params` whose values are plain a converter that needs no pydantic."""
    if _RuntimeParam is None:
        return
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            continue
        kind = _kind(descriptor)
        if kind is not None:
            param._runtime_param = _Plain(descriptor.parameter_info, descriptor.annotation, kind, descriptor)


def _kind(descriptor) -> str | None:
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None \
            or getattr(info, "clamp", False):
        return None
    annotation = descriptor.annotation
    if annotation is str or annotation is bool or annotation == list[str]:
        return "list" if annotation == list[str] else annotation.__name__
    if annotation is int:
        return "int"
    return None


if _RuntimeParam is not None:
    from dataclasses import dataclass, field

    @dataclass(frozen=True)
    class _Plain(_RuntimeParam):
        """The plain conversions; anything else is the adapter's (built only then)."""

        kind: str = "str"
        descriptor: object = field(default=None, repr=False)

        def _coerce_value(self, value, param, ctx):
            kind = self.kind
            if kind == "str" and type(value) is str:
                return value
            if kind == "bool" and type(value) is bool:
                return value
            if kind == "list" and isinstance(value, (list, tuple)) and all(type(v) is str for v in value):
                return list(value)
            if kind == "int":
                number = value if type(value) is int else \
                    int(value) if type(value) is str and _CANONICAL_INT.fullmatch(value) else None
                info = self.parameter_info
                if number is not None and (info.min is None or number >= info.min) \
                        and (info.max is None or number <= info.max):
                    return number
            return _build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
