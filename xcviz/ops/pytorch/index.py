"""PyTorch's indexing ops: advanced indexing (`x[i, :, j]` with any mix of index tensors and full slices, NumPy's
rules for adjacent and separated index tensors), index_put, select/slice/masked scatters, as_strided, diagonal."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import Unsupported, is_np
from ..registry import LAYOUT, Entries
from ..rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _key(a, x, indices) -> tuple:
    """The NumPy index: each index tensor at its dim (attr `dims`), a full slice everywhere else."""
    dims = [int(d) for d in a["dims"]]
    if len(dims) != len(indices):
        raise Unsupported(f"{len(indices)} index tensors for dims {dims}")
    key: list = [slice(None)] * (max(dims) + 1 if dims else 0)
    for d, idx in zip(dims, indices):
        if idx.dtype == bool:
            raise Unsupported("a boolean mask index (data-dependent shape)")
        key[d] = idx.astype(np.int64)
    return tuple(key)


def index(xp, a, x, *indices):
    return x[_key(a, x, indices)]


def index_put(xp, a, x, values, *indices):
    key = _key(a, x, indices)
    values = values.astype(x.dtype)
    if is_np(xp):
        out = np.array(x, copy=True)
        if int(a.get("accumulate", 0)):
            np.add.at(out, key, np.broadcast_to(values, out[key].shape))
        else:
            out[key] = values
        return out
    x = xp.asarray(x)  # (a constant arrives as NumPy inside a compiled cluster)
    return x.at[key].add(values) if int(a.get("accumulate", 0)) else x.at[key].set(values)


def _gather_flops(ctx: Ctx, out: list[TensorType]) -> int:
    return 0


op("torch_index", groups=LAYOUT, infer=r.from_file, min_inputs=1, flops=_gather_flops, attrs={"dims": []},
   impl=index, doc="x[...] with an integer index tensor at each of `dims` and full slices elsewhere, broadcast "
                   "together; adjacent index dims stay in place, separated ones go first (aten.index)")
op("torch_index_put", groups=LAYOUT, infer=r.from_file, min_inputs=2, flops=r.output_flops(1),
   attrs={"dims": [], "accumulate": 0}, impl=index_put,
   doc="x with values written (or added, accumulate=1) at torch_index's positions (aten.index_put; inputs: x, "
       "values, then the index tensors)")


def _set(xp, x, key, src):
    if is_np(xp):
        out = np.array(x, copy=True)
        out[key] = src
        return out
    return xp.asarray(x).at[key].set(src.astype(x.dtype))


def select_scatter(xp, a, x, src):
    key = (slice(None),) * (int(a["axis"]) % x.ndim) + (int(a["index"]),)
    return _set(xp, x, key, src)


def slice_scatter(xp, a, x, src):
    key = (slice(None),) * (int(a["axis"]) % x.ndim) + (slice(a.get("start"), a.get("end"), int(a.get("step", 1))),)
    return _set(xp, x, key, src)


def masked_scatter(xp, a, x, mask, src):
    mask = xp.broadcast_to(mask.astype(bool), x.shape)
    flat = mask.reshape(-1)
    pos = xp.cumsum(flat.astype(np.int64)) - 1  # the k-th True takes src's k-th element
    taken = xp.take(src.reshape(-1), xp.clip(pos, 0, max(src.size - 1, 0)))
    return xp.where(flat, taken.astype(x.dtype), x.reshape(-1)).reshape(x.shape)


copies = dict(groups=LAYOUT, infer=r.same, flops=r.output_flops(1))
op("select_scatter", **copies, min_inputs=2, max_inputs=2, attrs={"axis": 0, "index": 0}, impl=select_scatter,
   doc="x with the slice at `index` along `axis` replaced by src (aten.select_scatter)")
op("slice_scatter", **copies, min_inputs=2, max_inputs=2, attrs={"axis": 0, "start": None, "end": None, "step": 1},
   impl=slice_scatter, doc="x with x[start:end:step] along `axis` replaced by src (aten.slice_scatter)")
op("masked_scatter", **copies, min_inputs=3, max_inputs=3, impl=masked_scatter,
   doc="x with its masked positions filled, in order, from src's elements (aten.masked_scatter)")


def as_strided(xp, a, x):
    """A view of x's elements (x taken as contiguous) by sizes and strides: a gather of static flat offsets."""
    sizes, strides = [int(s) for s in a["size"]], [int(s) for s in a["stride"]]
    offs = np.full(sizes, int(a.get("storage_offset") or 0), dtype=np.int64)
    for k, (n, s) in enumerate(zip(sizes, strides)):
        offs = offs + (np.arange(n, dtype=np.int64) * s).reshape([-1 if i == k else 1 for i in range(len(sizes))])
    if offs.size and (offs.min() < 0 or offs.max() >= x.size):
        raise Unsupported(f"as_strided reaches offset {int(offs.max())} of a {x.size}-element tensor")
    return xp.take(x.reshape(-1), offs)


def diagonal(xp, a, x):
    return xp.diagonal(x, offset=int(a.get("offset", 0)), axis1=int(a.get("axis1", 0)), axis2=int(a.get("axis2", 1)))


op("as_strided", groups=LAYOUT, infer=r.from_file, min_inputs=1, max_inputs=1, flops=r.zero_flops,
   attrs={"size": [], "stride": [], "storage_offset": 0}, impl=as_strided,
   doc="the elements of contiguous x at offset + sum(i_k * stride_k) (aten.as_strided)")
op("diagonal", groups=LAYOUT, infer=r.from_file, min_inputs=1, max_inputs=1, flops=r.zero_flops,
   attrs={"offset": 0, "axis1": 0, "axis2": 1}, impl=diagonal,
   doc="the diagonal of the (axis1, axis2) planes as the last dim (aten.diagonal)")
