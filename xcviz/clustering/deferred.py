"""Per-node lists that a pass holds as arrays and makes into Python lists only when someone reads them.

Making a Python list of every node's value is a real cost on a big graph; the compiled pass and the candidate
table hand over arrays, and many callers (the cost model, `stats --json`) never read the lists at all. A
dataclass field named here becomes a property: the constructor may store a `Deferred`, which its first read
makes (once) into the list.
Writes, `dataclasses.replace`, equality and repr go through the property, so they see plain lists.
"""
from __future__ import annotations


class Deferred:
    """A list not made yet: `make()` makes it; `array()`, when given, the same values as a numpy array."""

    __slots__ = ("make", "array")

    def __init__(self, make, array=None) -> None:
        self.make, self.array = make, array


def lazy_lists(*names: str):
    """Class decorator (after @dataclass): the fields `names` accept a Deferred and make it on first read."""
    def wrap(cls):
        for name in names:
            setattr(cls, name, _field(name))
        return cls
    return wrap


def _field(name: str) -> property:
    slot = "_lazy_" + name

    def get(self):
        v = self.__dict__[slot]
        if type(v) is Deferred:
            v = self.__dict__[slot] = v.make()
        return v

    def put(self, v) -> None:
        self.__dict__[slot] = v

    return property(get, put, doc=f"{name} (made from the pass's arrays on first read)")


def stored(obj, name: str):
    """The field as stored: a Deferred not made yet, or the list."""
    return obj.__dict__["_lazy_" + name]
