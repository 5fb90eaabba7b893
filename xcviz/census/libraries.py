"""The census's optional libraries (timm, transformers and what they import): imported on demand, and a library
that is missing or raises on import (a torchvision built for another torch: `operator torchvision::nms does not
exist`) said in one line that names it and the fix, so that only the rows needing it fail."""
from __future__ import annotations

import importlib
import os
import sys
import traceback

EXTRA_HINT = "pip install -e '.[census]' (timm, transformers, dask, pebble)"


class LibraryUnavailable(Exception):
    """A library a census source needs does not import; str() is the row's one line (library and fix)."""


def load(name: str):
    """The module `name`, or LibraryUnavailable saying which library failed (it, or one it imports) and how to fix it."""
    try:
        return importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - an optional library may raise anything while importing
        raise LibraryUnavailable(describe(name, e)) from None


def culprit(e: BaseException, default: str) -> str:
    """The top-level package whose module raised `e` while `default` was importing (the innermost frame in
    site-packages), or, for a missing module, the module's own package."""
    if isinstance(e, ModuleNotFoundError) and e.name:
        return e.name.split(".")[0]
    found = default
    for frame in traceback.extract_tb(e.__traceback__):
        package = _package_of(frame.filename)
        if package:
            found = package
    return found


def _package_of(path: str) -> str | None:
    for root in sorted({p for p in sys.path if p and os.path.isdir(p)}, key=len, reverse=True):
        root = os.path.abspath(root)
        path_abs = os.path.abspath(path)
        if path_abs.startswith(root + os.sep):
            top = path_abs[len(root) + 1:].split(os.sep)[0]
            top = top[:-3] if top.endswith(".py") else top
            if top.isidentifier() and top not in ("importlib", "xcviz") and not _stdlib(root):
                return top
            return None
    return None


def _stdlib(root: str) -> bool:
    import sysconfig

    return root in {os.path.abspath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}


def describe(name: str, e: BaseException) -> str:
    """One line: which library does not import (`name`, or one it imports), why (its first line), and the fix."""
    lib = culprit(e, name)
    why = (str(e).strip().splitlines() or [""])[0][:200]
    via = "" if lib == name else f", and {name} imports it"
    if isinstance(e, ModuleNotFoundError):
        return (f"{name} is not installed: {EXTRA_HINT}" if lib == name
                else f"{name} needs {lib}, which is not installed: pip install {lib}")
    if lib == "torchvision":
        return (f"torchvision does not import ({type(e).__name__}: {why}){via}: a torchvision built for another "
                f"torch; {TORCHVISION_FIX}")
    return (f"{lib} does not import ({type(e).__name__}: {why}){via}: reinstall it for this Python and torch "
            f"(pip install --force-reinstall {lib}) or uninstall it")


TORCHVISION_FIX = ("install the torchvision release made for the installed torch (for a CPU torch: pip install "
                   "torchvision --index-url https://download.pytorch.org/whl/cpu)")


def import_failure(e: BaseException, user: str) -> str | None:
    """describe()'s line when `e` was raised while a module was being imported (a library `user` imports
    lazily, as transformers imports torchvision for a vision model), else None."""
    if isinstance(e, ImportError) or any(f.filename.startswith("<frozen importlib") for f in traceback.extract_tb(e.__traceback__)):
        return describe(user, e)
    return None
