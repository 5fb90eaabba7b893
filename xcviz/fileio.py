"""Safe output: atomic writes (temp file in the target folder, then rename), never over an input file."""
from __future__ import annotations

import os
import tempfile

from .errors import XcvizError

_inputs: set[str] = set()


def protect(path: str) -> None:
    """Remember a file read by this run, so no output may replace it."""
    _inputs.add(os.path.realpath(path))


def check_target(path: str) -> None:
    real = os.path.realpath(path)
    if real in _inputs:
        raise XcvizError("refusing to write over an input file", where=path, hint="choose another output path")
    if os.path.isdir(path):
        raise XcvizError("output path is a directory", where=path, hint="give a file name, e.g. -o report.json")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise XcvizError("output folder does not exist", where=path)
    if not os.access(folder, os.W_OK):
        raise XcvizError("output folder is not writable", where=path)


def write_atomic(path: str, data: bytes | str) -> None:
    check_target(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".xcviz-", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the user's usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_npz(path: str, arrays: dict) -> None:
    """Arrays keyed by name into an .npz file, atomically (names with ':' are kept as given)."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **{str(k): np.asarray(v) for k, v in arrays.items()})
    write_atomic(path, buf.getvalue())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
