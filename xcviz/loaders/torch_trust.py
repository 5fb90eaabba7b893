"""Which reader a .pt2 gets: xcviz's own (no pickle, no eval, bounded), or torch.export.load only with --trust-pickle."""
from __future__ import annotations

import os
import re
import types
import typing
import zipfile
import zlib
from contextlib import contextmanager

import msgspec

from ..errors import XcvizError

EXTRA_HINT = "install the extra: pip install -e '.[torch]' (torch 2.13 CPU: --extra-index-url https://download.pytorch.org/whl/cpu)"


def import_torch(where: str | None = None):
    try:
        import torch
    except ImportError:
        raise XcvizError("reading PyTorch programs needs torch, which is not installed", where=where,
                         hint=EXTRA_HINT) from None
    return torch


class _Head(msgspec.Struct):
    """What check_archive reads of a model JSON (other keys are skipped, not built)."""

    schema_version: dict | None = None
    torch_version: str | None = None


def check_archive(path: str, limits=None) -> None:
    """A .pt2 file is a zip holding `archive_format` and a serialized program whose schema this torch reads."""
    from torch._export.serde.schema import SCHEMA_VERSION

    from .budget import Limits

    limits = Limits(limits.max_bytes, limits.max_elements, limits.max_depth) if limits is not None \
        else Limits(2 * 1024**3)
    limits.source = path

    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            models = [n for n in names if re.fullmatch(r"[^/]+/models/[^/]+\.json", n)]
            if not any(n.endswith("/archive_format") for n in names) or not models:
                raise XcvizError("not a torch.export program (no archive_format or models/*.json inside)", where=path,
                                 hint="write it with torch.export.save(torch.export.export(model, args), 'model.pt2')")
            try:  # (only the head is built: the whole program as Python objects is slow to build on big programs)
                head = limits.json(z, models[0], _Head)
            except msgspec.ValidationError:
                head = _Head()
    except (zipfile.BadZipFile, OSError, NotImplementedError, EOFError, zlib.error) as e:
        raise XcvizError(f"not a torch.export program ({e})"[:200], where=path,
                         hint="a .pt2 file is the zip written by torch.export.save") from None
    except (ValueError, UnicodeDecodeError, msgspec.DecodeError):
        raise XcvizError("not a torch.export program (its model JSON is unreadable)", where=path,
                         hint="the file may be truncated") from None
    version = head.schema_version
    major = version.get("major") if isinstance(version, dict) else None
    if not isinstance(major, int):
        raise XcvizError("not a torch.export program (no schema_version)", where=path,
                         hint="write it with torch.export.save")
    if major > SCHEMA_VERSION[0]:
        raise XcvizError(f"saved with export schema {major}.{version.get('minor')} by torch "
                         f"{head.torch_version or '?'}; this torch reads schema {SCHEMA_VERSION[0]}.x", where=path,
                         hint="load it with the torch that saved it, or re-export it with this one")


@contextmanager
def _cached_type_hints():
    """torch's deserializer calls typing.get_type_hints on a schema class for every object it reads (most of
    torch.export.load's time); the answer for a class never changes, so while it
    runs, its module sees a `typing` whose get_type_hints remembers. Left alone if torch changes that."""
    try:
        from torch._export.serde import serialize
    except ImportError:
        yield
        return
    real = getattr(serialize, "typing", None)
    if real is not typing:
        yield
        return
    memo: dict = {}

    def get_type_hints(obj, globalns=None, localns=None, include_extras=False):
        key = (obj, id(globalns), id(localns), include_extras)
        if key not in memo:
            memo[key] = typing.get_type_hints(obj, globalns, localns, include_extras)
        return memo[key]

    # a copy of the module's namespace (attribute reads stay plain) with the remembering get_type_hints
    serialize.typing = types.SimpleNamespace(**{**vars(typing), "get_type_hints": get_type_hints})
    try:
        yield
    finally:
        serialize.typing = real


TRUST_HINT = ("only for a file you trust: --trust-pickle (trust_pickle=True) reads it with torch.export.load, "
              "which runs code from the file")


def program_for_graph(path: str, trust_pickle: bool = False, limits=None):
    """What graph_from_program needs from a .pt2 file, read by xcviz's own reader (torch_archive: no pickle, no
    eval, bounded). What it does not cover is refused with one line, unless `trust_pickle` (the user's explicit
    opt-in) lets torch.export.load read it; XCVIZ_PT2=torch forces the latter, and needs the opt-in too."""
    import_torch(path)
    check_archive(path, limits)
    if os.environ.get("XCVIZ_PT2") == "torch":
        if not trust_pickle:
            raise XcvizError("XCVIZ_PT2=torch reads .pt2 files with torch.export.load, which unpickles", where=path,
                             hint=TRUST_HINT)
        return read_program(path, trust_pickle=True)
    from .torch_archive import Pickled, Unreadable, read_archive

    try:
        return read_archive(path, limits)
    except Pickled as e:
        if not trust_pickle:
            raise XcvizError(f"archive member {e.member!r} is a pickle ({e.what}); xcviz does "
                             "not unpickle", where=path, hint=TRUST_HINT) from None
    except Unreadable as e:
        if not trust_pickle:
            raise XcvizError(f"xcviz's .pt2 reader does not cover this program ({str(e)[:200]})", where=path,
                             hint="re-export it with plain tensors and static or simple symbolic sizes; or, "
                             + TRUST_HINT) from None
    return read_program(path, trust_pickle=True)


def read_program(path: str, trust_pickle: bool = False):
    """torch.export.load, after the checks; every failure is one line, torch's warnings kept off stderr.
    It unpickles (and sympifies) what the file holds: only with the user's opt-in."""
    if not trust_pickle:
        raise XcvizError("reading this .pt2 file needs torch.export.load, which unpickles", where=path,
                         hint=TRUST_HINT)
    torch = import_torch(path)
    check_archive(path)
    import logging
    import warnings

    quiet = [logging.getLogger(n) for n in ("torch", "torch._export", "torch.export")]
    levels = [lg.level for lg in quiet]
    try:
        with _cached_type_hints(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for lg in quiet:
                lg.setLevel(logging.ERROR + 10)
            return torch.export.load(path)
    except Exception as e:  # noqa: BLE001 - any failure inside torch's deserializer is a bad file
        raise XcvizError(f"torch.export.load failed: {type(e).__name__}: {e}".splitlines()[0][:300], where=path,
                         hint="re-export the model with this torch version") from None
    finally:
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)
