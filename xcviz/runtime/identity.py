"""A dict key that stands for one object itself, compared by identity: `Same(obj)`.

A cache keyed by `id(obj)` can hand a freed object's entry to a new object that got the same id; a `Same`
key holds its object (so the entry keeps it alive and no other object can take its id) and is equal only to
a key for that very object. For objects that are not hashable by value (a Graph, whose nodes may be
millions, or a Clustering, a mutable dataclass) and must not be compared by value (two equal clusterings
are still two plans' owners)."""
from __future__ import annotations


class Same:
    """`obj` as a dict key by identity (hash: the object's identity hash; equal: the same object)."""

    __slots__ = ("obj", "_hash")

    def __init__(self, obj) -> None:
        self.obj = obj
        self._hash = object.__hash__(obj)   # identity hash, whatever the class says of its own hashing

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return type(other) is Same and other.obj is self.obj

    def __repr__(self) -> str:
        return f"Same({type(self.obj).__name__})"
