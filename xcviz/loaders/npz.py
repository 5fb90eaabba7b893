"""Reading an --inputs .npz file: its arrays by name, every declared size checked before numpy allocates (numpy
allocates each array from its .npy header alone), no pickled objects, one-line errors."""
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


def check_npz(path: str, max_bytes: int = 2 * 1024**3) -> None:
    """Every member's declared sizes against the archive before numpy allocates: what the zip inflates (at most
    `max_bytes` in all) and the array each .npy header declares (numpy allocates it whole, from the header
    alone, before reading a byte of it), which must fit in its member."""
    import zipfile

    import numpy as np

    if not zipfile.is_zipfile(path):
        return  # (np.load says what the file is)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    total = 0
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                total += info.file_size
                if total > max_bytes:
                    raise XcvizError(f"its members inflate to over {max_bytes:,} bytes", where=path,
                                     hint="an inputs file this large is refused")
                if not info.filename.endswith(".npy"):
                    continue
                with z.open(info) as f:
                    read = readers.get(np.lib.format.read_magic(f))
                    if read is None:
                        continue
                    shape, _, dtype = read(f)
                count = 1
                for n in shape:
                    count *= n
                if count * dtype.itemsize > info.file_size:
                    raise XcvizError(f"array {info.filename[:-4]!r} declares {count:,} elements of {dtype} "
                                     f"({count * dtype.itemsize:,} bytes) in a member of {info.file_size:,} bytes",
                                     where=path, hint="the file is corrupted or crafted")
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError):
        return  # (np.load reports it, in its words)
