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
    write_atomic(path, npz_bytes(arrays))


def npz_bytes(arrays: dict) -> bytes:
    """An .npz archive as np.savez writes it, except that an ml_dtypes array (bfloat16, float8_*, int4, ...)
    keeps its dtype's name in its header: np.savez would write raw bytes ('|V2') that no reader can type, where
    this name reads back with np.load once ml_dtypes is imported (numpy knows the names ml_dtypes registers).
    Members carry a fixed timestamp, so the same arrays give the same bytes."""
    import io
    import zipfile

    import numpy as np

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, value in arrays.items():
            a = np.asarray(value)
            info = zipfile.ZipInfo(str(name) + ".npy", date_time=(1980, 1, 1, 0, 0, 0))  # same arrays, same bytes
            with z.open(info, "w", force_zip64=True) as f:
                if a.dtype.type.__module__ == "ml_dtypes":  # (float8_e5m2 says '<f1', the others '|V1', '<V2')
                    np.lib.format.write_array_header_1_0(
                        f, {"descr": a.dtype.name, "fortran_order": False, "shape": a.shape})
                    f.write(a.tobytes(order="C"))
                else:  # (object arrays of anything but text keep np.savez's pickle: no reader of ours takes them)
                    np.lib.format.write_array(f, _text(a) if a.dtype == object else a, allow_pickle=True)
    return buf.getvalue()


def _text(a):
    """An object array of str (or of bytes) as fixed-width text, which np.load reads without unpickling."""
    import numpy as np

    items = a.reshape(-1).tolist()
    for kind in (str, bytes):
        if all(isinstance(x, kind) for x in items):  # (an empty array too: as text)
            return np.array(items, dtype=kind).reshape(a.shape)
    return a


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
