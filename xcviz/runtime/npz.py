"""Reading an --inputs .npz file: its arrays by name, with no pickled objects and one-line errors."""
from __future__ import annotations

import os

from ..errors import XcvizError


class NpzInputs(dict):
    """Arrays read from an .npz file; `source` (its path) becomes the `where` of errors about them."""

    source: str | None = None


def read_npz(path: str | None) -> dict | None:
    """The --inputs file's arrays by name (None without one); one-line errors for unreadable files."""
    if path is None:
        return None
    import numpy as np

    from ..fileio import protect
    from ..loaders.npz import check_npz

    if not os.path.isfile(path):
        raise XcvizError("inputs file not found", where=path, hint="write one with numpy.savez(path, x=...)")
    protect(path)
    check_npz(path)  # every array's declared size, before numpy allocates it
    try:
        import ml_dtypes  # noqa: F401 - registers bfloat16, float8_*, int4, ... so their names in a header read back
    except ImportError:
        pass
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = NpzInputs({k: data[k] for k in data.files})
    except (ValueError, OSError, EOFError) as e:
        raise XcvizError(f"not a readable .npz file ({e.__class__.__name__}: {e})"[:300], where=path,
                         hint="write it with numpy.savez; object arrays are refused") from None
    arrays.source = path
    return arrays
