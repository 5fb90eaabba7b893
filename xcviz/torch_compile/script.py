"""The user's own script for `xcviz compile-report script.py:factory`: imported and run on purpose (it is the
user's code, named by the user, not a model file); its failures become one line with the user's file:line."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import traceback

from ..errors import XcvizError, did_you_mean

HINT = "write SCRIPT.py:FACTORY, FACTORY a function returning (model, example_args[, example_kwargs])"


def _user_line(exc: BaseException, path: str) -> str | None:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == path]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def load_factory(target: str):
    """(model, args tuple, kwargs dict, display name) from the factory's return value."""
    path, sep, func = target.rpartition(":")
    if not sep or not path or not func:
        raise XcvizError(f"not SCRIPT.py:FACTORY: {target!r}", hint=HINT)
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise XcvizError("no such script", where=path, hint=HINT)
    from ..loaders.torch_export import import_torch

    import_torch(path)
    name = "_xcviz_user_script_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise XcvizError("cannot import this file as a Python script", where=path, hint=HINT)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))  # the script's own imports of its neighbours work as under `python`
    try:
        sys.modules[name] = module
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
            fn = getattr(module, func, None)
            if not callable(fn):
                names = [n for n in vars(module) if callable(getattr(module, n)) and not n.startswith("_")]
                raise XcvizError(f"the script has no function {func!r}", where=path, hint=did_you_mean(func, names) or HINT)
            made = fn()
    except XcvizError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's code failed: its own message and line
        raise XcvizError(f"{target} raised {type(e).__name__}: {e}".splitlines()[0][:300],
                         where=_user_line(e, path) or path, hint="run the script with python to see the traceback") from None
    finally:
        if os.path.dirname(path) in sys.path:
            sys.path.remove(os.path.dirname(path))
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise XcvizError(f"{func}() returned {type(made).__name__}, not (model, example_args[, example_kwargs])",
                         where=path, hint=HINT)
    model, args = made[0], made[1]
    kwargs = made[2] if len(made) == 3 else {}
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    if not isinstance(kwargs, dict):
        raise XcvizError(f"{func}()'s example_kwargs is a {type(kwargs).__name__}, not a dict", where=path, hint=HINT)
    return model, args, kwargs, getattr(model, "__name__", None) or type(model).__name__


def call_model(model, args: tuple, kwargs: dict, backend, target: str, no_grad: bool = False) -> None:
    """One compiled call with Dynamo's caches reset before and after (as torch._dynamo.explain does);
    `no_grad`: under torch.no_grad() (the command computes no gradients, and hybrid runs forward-only)."""
    import contextlib

    import torch

    path = os.path.abspath(target.rpartition(":")[0])
    torch._dynamo.reset()
    try:  # what the model prints goes to stderr: stdout carries the report (--json) alone
        with contextlib.redirect_stdout(sys.stderr), (torch.no_grad() if no_grad else contextlib.nullcontext()):
            torch.compile(model, backend=backend)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the model failed under torch.compile: its message and the user's line
        raise XcvizError(f"the model raised under torch.compile: {type(e).__name__}: {e}".splitlines()[0][:300],
                         where=_user_line(e, path) or target, hint="run it with torch.compile(backend='eager') to compare") from None
    finally:
        torch._dynamo.reset()
