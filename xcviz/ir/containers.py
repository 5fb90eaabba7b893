"""ONNX's non-tensor value types: a sequence of tensors (`seq<f32[?]>`) and an optional (`opt<f32[2]>`).

Each is a TensorType subclass whose (shape, dtype) describe the element, so code that only asks for a
dtype keeps working; equality includes the class (a seq<f32[2]> is not an f32[2]), and a container has no
element count or byte size (numel/nbytes are None): its length is only known at run time.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from . import TensorType


class _Container:
    """What a container type answers differently from a tensor: no size, and binding keeps its class."""

    __slots__ = ()

    def numel(self, dims: Mapping[str, int] | None = None) -> int | None:
        return None

    def nbytes(self, dims: Mapping[str, int] | None = None) -> int | None:
        return None

    def bind(self, dims: Mapping[str, int]):
        return replace(self, shape=TensorType.bind(self, dims).shape)


@dataclass(frozen=True, slots=True)
class SequenceType(_Container, TensorType):
    """A sequence of tensors, each of element type (shape, dtype); its length is data-dependent."""

    def __str__(self) -> str:
        return f"seq<{TensorType.__str__(self)}>"


@dataclass(frozen=True, slots=True)
class OptionalType(_Container, TensorType):
    """A tensor of (shape, dtype), or a sequence of them when `sequence`, or nothing."""

    sequence: bool = False

    def element(self) -> TensorType:
        """The type of the value an OptionalGetElement returns."""
        return (SequenceType if self.sequence else TensorType)(self.shape, self.dtype)

    def __str__(self) -> str:
        return f"opt<{self.element()}>"


def container_text(t: TensorType, type_text) -> str:
    """The text form: `seq<f32[?]>`, `opt<i64[2]>`, `opt<seq<f32[3]>>` (type_text prints the element)."""
    if isinstance(t, OptionalType):
        return f"opt<{container_text(t.element(), type_text)}>"
    elem = type_text(TensorType(t.shape, t.dtype))
    return f"seq<{elem}>" if isinstance(t, SequenceType) else elem


def container_type(parser) -> TensorType:
    """Parse `seq<T>` / `opt<T>` at the parser's position (the text form's inverse of container_text)."""
    word = parser.take(kind="word", what="seq or opt")
    parser.take("<", what="'<' and the element type")
    inner = parser.tensor_type()
    parser.take(">", what="'>' closing the element type")
    if word == "seq":
        if type(inner) is not TensorType:
            raise parser.error("a sequence holds tensors", hint="seq<f32[?]>")
        return SequenceType(inner.shape, inner.dtype)
    if isinstance(inner, OptionalType):
        raise parser.error("an optional cannot hold an optional", hint="opt<f32[2]> or opt<seq<f32[?]>>")
    return OptionalType(inner.shape, inner.dtype, isinstance(inner, SequenceType))
