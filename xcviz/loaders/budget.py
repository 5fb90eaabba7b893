"""What a hostile file may make a loader inflate or allocate: the limits of one load, spent as it reads."""
from __future__ import annotations

import sys
import zipfile
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import msgspec

from ..errors import XcvizError

DEFAULT_MAX_BYTES = 2 * 1024**3  # = loaders.DEFAULT_MAX_FILE_BYTES


@dataclass
class Limits:
    """The loader's limits as a reader spends them: bytes inflated or materialised (--max-file-bytes), elements
    per tensor (--max-elements; None: what 64 bits count), nesting of a parsed document (--max-depth)."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_elements: int | None = None
    max_depth: int = 100
    source: str = ""

    def take(self, n: int, what: str, where: str | None = None) -> None:
        if n > self.max_bytes:
            raise XcvizError(f"{what} is {n:,} bytes, over the {self.max_bytes:,} left of --max-file-bytes",
                             where=where or self.source, hint="what a file inflates or materialises counts "
                             "against the limit; raise it with --max-file-bytes for a file you know")
        self.max_bytes -= n

    def read(self, z: zipfile.ZipFile, name: str) -> bytes:
        """A member's bytes, inflating no more than it declares and the limit allows (a bounded stream: a
        header that lies about the size stops the read, it does not extend it)."""
        info = z.getinfo(name)
        self.take(info.file_size, f"archive member {name!r} (inflated)")
        with z.open(info) as f:
            data = f.read(info.file_size + 1)
        if len(data) != info.file_size:
            raise XcvizError(f"archive member {name!r} inflates to other than the {info.file_size:,} bytes it "
                             "declares", where=self.source, hint="the file is corrupted or crafted")
        return data

    def json(self, z: zipfile.ZipFile, name: str, type=object):
        return decode_json(self.read(z, name), self.max_depth, self.source, name, type)

    def tensor(self, shape, itemsize: int, what: str, where: str | None = None, stored: int = 0) -> int:
        """The element count of a tensor about to be materialised, refused before any allocation when a
        dimension is not a non-negative integer, the count is over --max-elements or 64 bits, or the bytes it
        adds to the `stored` bytes it is made from (a splat, a zero stride) over what is left of the limit."""
        count = 1
        for n in shape:
            if type(n) is not int or n < 0:
                raise XcvizError(f"{what} has a dimension of {str(n)[:40]}, not a non-negative integer",
                                 where=where or self.source, hint="the file is corrupted or crafted")
            count *= n
        if count >= 2**63 or (self.max_elements is not None and count > self.max_elements):
            limit = f"the limit of {self.max_elements:,}" if count < 2**63 else "what a 64-bit count can hold"
            raise XcvizError(f"{what} {list(shape)} has {count:,} elements, over {limit}", where=where or self.source,
                             hint="raise the limit with --max-elements for a file you know")
        extra = count * itemsize - stored
        if extra > self.max_bytes:
            source = f" from {stored:,} in the file" if stored else ""
            raise XcvizError(f"{what} {list(shape)} would materialise {count * itemsize:,} bytes{source}, over the "
                             f"{self.max_bytes:,} left of --max-file-bytes", where=where or self.source,
                             hint="what a file inflates or materialises counts against the limit; raise it with "
                             "--max-file-bytes for a file you know")
        self.max_bytes -= max(extra, 0)
        return count


def decode_json(data: bytes, max_depth: int, source: str, member: str, type=object):
    """msgspec's decode, refused past `max_depth` levels: msgspec counts its nesting against Python's recursion
    limit, which is lowered to the present depth plus the limit while it runs (no cost; a 200,000-deep
    document ends in a RecursionError instead of exhausting the stack)."""
    depth, f = 0, sys._getframe()
    while f is not None:
        depth, f = depth + 1, f.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + max_depth + 8)
    try:
        return msgspec.json.decode(data, type=type)
    except RecursionError:
        raise XcvizError(f"archive member {member!r} nests deeper than {max_depth} levels", where=source,
                         hint="raise the limit with --max-depth for a file you know") from None
    finally:
        sys.setrecursionlimit(old)


_CURRENT: ContextVar[Limits | None] = ContextVar("xcviz_load_limits", default=None)


def current() -> Limits:
    """The limits of the load in progress (a fresh default when there is none: a reader called directly)."""
    return _CURRENT.get() or Limits()


@contextmanager
def loading(limits: Limits):
    """Make `limits` the current load's while the block runs (readers deep inside a format spend from it)."""
    token = _CURRENT.set(limits)
    try:
        yield limits
    finally:
        _CURRENT.reset(token)
