"""Signal ops: DFT and STFT (on ONNX's real/imaginary last axis), window functions and MelWeightMatrix."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, np_dtype, present, static
from .registry import Entries
from .rules import Ctx, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _split(x):
    """(..., 1) real or (..., 2) real/imaginary pairs -> (real part, imaginary part or None)."""
    if x.shape[-1] == 1:
        return x[..., 0], None
    if x.shape[-1] == 2:
        return x[..., 0], x[..., 1]
    raise Unsupported(f"DFT/STFT input {x.shape}: the last axis must be 1 (real) or 2 (real, imaginary)")


def _pairs(xp, z, dtype):
    return xp.stack([xp.real(z), xp.imag(z)], axis=-1).astype(dtype)


def _forward(xp, re, im, n: int, axis: int, onesided: bool):
    """The spectrum of length n (or its first n//2+1 bins). A real signal goes through a real-input FFT (TF's
    RFFT), whose DC and Nyquist bins are real by construction, and the other bins follow by Hermitian symmetry
    (bin k = conj(bin n-k)); a complex one through the complex FFT."""
    if im is not None:
        z = xp.fft.fft(re + 1j * im, n=n, axis=axis)
        return xp.take(z, np.arange(n // 2 + 1), axis=axis) if onesided else z
    z = xp.fft.rfft(re, n=n, axis=axis)
    if onesided or n < 3:  # for n of 1 or 2 the n//2+1 bins are the whole spectrum
        return z
    return xp.concatenate([z, xp.conj(xp.take(z, n - np.arange(n // 2 + 1, n), axis=axis))], axis=axis)


def _scalar(v, what: str) -> int | None:
    if not present(v):
        return None
    return ints(v, what)[0]


def _dft_axis(a, axis_input, rank: int) -> int:
    """Opset 20 takes the axis as an input (default -2); opsets 17-19 as an attribute (default 1, which the
    ONNX loader writes out for those files)."""
    axis = _scalar(axis_input, "DFT axis")
    if axis is None:
        axis = -2 if a.get("axis") is None else int(a["axis"])
    if not -rank <= axis < rank or axis % rank == rank - 1:
        raise Unsupported(f"DFT axis {axis} for a rank-{rank} input: the last axis holds real/imaginary parts")
    return axis % rank


def dft(xp, a, x, dft_length=None, axis_input=None):
    if x.dtype.kind != "f":
        raise Unsupported(f"DFT of {x.dtype}: float16/32/64 inputs only")
    axis = _dft_axis(a, axis_input, x.ndim)
    inverse, onesided = bool(int(a.get("inverse", 0))), bool(int(a.get("onesided", 0)))
    n = _scalar(dft_length, "DFT dft_length")
    m = x.shape[axis]
    if n is None:
        n = 2 * (m - 1) if inverse and onesided else m
    if n < 1:
        raise Unsupported(f"DFT length {n}: must be positive")
    # NumPy and XLA transform float32 in float32 (as the reference does); float16 runs in float32
    re, im = _split(x.astype(np.float64 if x.dtype == np.float64 else np.float32))
    if not inverse:
        return _pairs(xp, _forward(xp, re, im, n, axis, onesided), x.dtype)
    z = re if im is None else re + 1j * im
    if onesided:  # a one-sided spectrum back to its real signal
        return xp.fft.irfft(z, n=n, axis=axis)[..., None].astype(x.dtype)
    return _pairs(xp, xp.fft.ifft(z, n=n, axis=axis), x.dtype)


def _given(ctx: Ctx, i: int) -> bool:
    """Whether optional input i is there (an absent one has neither shape nor dtype)."""
    return i < len(ctx.inputs) and (ctx.inputs[i].shape is not None or ctx.inputs[i].dtype is not None)


def _const_int(ctx: Ctx, i: int) -> int | None:
    v = ctx.const(i)
    return None if v is None or not np.asarray(v).size else int(np.asarray(v).reshape(-1)[0])


def infer_dft(ctx: Ctx) -> list[TensorType]:
    x, dt = ctx.shape(0), ctx.dtype(0)
    n, axis = _const_int(ctx, 1), _const_int(ctx, 2)
    if x is None or len(x) < 2 or (_given(ctx, 1) and n is None) or (_given(ctx, 2) and axis is None):
        return [TensorType(None, dt)]  # a length or axis known only at run time
    if axis is None:
        axis = -2 if ctx.attrs.get("axis") is None else int(ctx.attrs["axis"])
    if not -len(x) <= axis < len(x):
        return [TensorType(None, dt)]
    axis %= len(x)
    inverse, onesided = int(ctx.attrs.get("inverse", 0)), int(ctx.attrs.get("onesided", 0))
    if n is None:
        m = x[axis]
        if not isinstance(m, int):
            return [TensorType(None, dt)]
        n = 2 * (m - 1) if inverse and onesided else m
    out = list(x)
    out[axis] = n // 2 + 1 if onesided and not inverse else n
    out[-1] = 1 if inverse and onesided else 2
    return [TensorType(tuple(out), dt)]


def dft_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = numel(out[0].shape) if out else None
    x = ctx.shape(0)
    if n is None or x is None:
        return None
    longest = max([d for d in x[:-1] if isinstance(d, int)] or [1])
    return int(5 * n * max(np.log2(max(longest, 2)), 1))  # the usual 5 N log2 N of a radix-2 FFT


op("dft", "DFT", infer=infer_dft, flops=dft_flops, min_inputs=1, max_inputs=3, static_inputs=(1, 2),
   attrs={"axis": None, "inverse": 0, "onesided": 0}, impl=dft,
   doc="discrete Fourier transform along one axis; forward, inverse and one-sided (rfft / irfft)")


# ---- stft: frames of the signal, windowed, each transformed ----------------------------------------------
def _stft_geometry(frame_step, window, frame_length, signal_len: int) -> tuple[int, int, int]:
    """(step, frame length, number of frames), each static: they decide the output shape."""
    step = int(static(frame_step, "STFT frame_step").reshape(-1)[0])
    length = _scalar(frame_length, "STFT frame_length")
    if length is None:
        length = window.shape[0] if present(window) else signal_len
    if present(window) and window.shape != (length,):
        raise Unsupported(f"STFT window {window.shape} does not match frame_length {length}")
    if step < 1 or not 1 <= length <= signal_len:
        raise Unsupported(f"STFT frame_step {step} / frame_length {length} for a signal of {signal_len}")
    return step, length, 1 + (signal_len - length) // step


def stft(xp, a, x, frame_step, window=None, frame_length=None):
    if x.ndim != 3 or x.dtype.kind != "f":
        raise Unsupported(f"STFT signal {x.dtype}{list(x.shape)}: want float (batch, length, 1 or 2)")
    step, length, frames = _stft_geometry(frame_step, window, frame_length, x.shape[1])
    idx = np.arange(frames)[:, None] * step + np.arange(length)[None, :]  # (frames, length), static
    framed = x.astype(np.float64 if x.dtype == np.float64 else np.float32)[:, idx, :]  # (batch, frames, length, c)
    if present(window):
        framed = framed * window.astype(framed.dtype).reshape((1, 1, length, 1))
    re, im = _split(framed)
    return _pairs(xp, _forward(xp, re, im, length, 2, bool(int(a.get("onesided", 1)))), x.dtype)


def infer_stft(ctx: Ctx) -> list[TensorType]:
    x, dt = ctx.shape(0), ctx.dtype(0)
    step, length = _const_int(ctx, 1), _const_int(ctx, 3)
    win = ctx.shape(2) if _given(ctx, 2) else None
    if x is None or len(x) != 3:
        return [TensorType(None, dt)]
    if length is None and not _given(ctx, 3):  # the window's length, else the whole signal
        length = (win[0] if win is not None and len(win) == 1 else None) if _given(ctx, 2) else x[1]
    if step is None or step < 1 or not isinstance(x[1], int) or not isinstance(length, int) or length > x[1]:
        return [TensorType(None, dt)]
    bins = length // 2 + 1 if int(ctx.attrs.get("onesided", 1)) else length
    return [TensorType((x[0], 1 + (x[1] - length) // step, bins, 2), dt)]


op("stft", "STFT", infer=infer_stft, flops=dft_flops, min_inputs=2, max_inputs=4, static_inputs=(1, 3),
   attrs={"onesided": 1}, impl=stft, doc="short-time Fourier transform: frames, window, DFT of each frame")


# ---- window functions ------------------------------------------------------------------------
def _out_dtype(ctx: Ctx) -> str | None:
    from ..ir import canonical_dtype

    return canonical_dtype(str(np_dtype(int(ctx.attrs.get("output_datatype", 1)))))


def infer_window(ctx: Ctx) -> list[TensorType]:
    size = ctx.const(0)
    n = int(np.asarray(size).reshape(())) if size is not None else "window"
    if isinstance(n, int) and n < 0:
        raise r.ShapeError(f"window size {n} is negative")
    return [TensorType((n,), _out_dtype(ctx))]


def _window(terms: tuple[float, ...]):
    """sum_k terms[k] * cos(2 pi k n / N), N = size (periodic) or size - 1; computed in float64, then cast
    (the size is static, so the whole window is a constant under XLA, as TF folds its own window ops)."""
    def impl(xp, a, size):
        n = int(static(size, "window size").reshape(()))
        if n < 0:
            raise Unsupported(f"window size {n} is negative")
        denom = n if int(a.get("periodic", 1)) else n - 1
        k = np.arange(n, dtype=np.float64)
        y = np.zeros(n)
        for i, c in enumerate(terms):
            y = y + c * np.cos(2 * np.pi * i * k / denom) if i else y + c
        return y.astype(np_dtype(int(a.get("output_datatype", 1))))
    return impl


_WIN = dict(infer=infer_window, flops=r.output_flops(4), min_inputs=1, max_inputs=1, static_inputs=(0,),
            attrs={"periodic": 1, "output_datatype": 1})
op("hann_window", "HannWindow", impl=_window((0.5, -0.5)), doc="sin^2(pi n / N): a constant of the static size", **_WIN)
op("hamming_window", "HammingWindow", impl=_window((25 / 46, -21 / 46)),
   doc="25/46 - 21/46 cos(2 pi n / N): a constant of the static size", **_WIN)
op("blackman_window", "BlackmanWindow", impl=_window((0.42, -0.5, 0.08)),
   doc="0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N): a constant of the static size", **_WIN)


def _dtype_name(to) -> str | None:
    from ..ir import canonical_dtype

    return canonical_dtype(str(np_dtype(to)))


# ---- MelWeightMatrix ------------------------------------------------------------------------------
def mel_weight_matrix(xp, a, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
    """Triangular mel filters over dft_length // 2 + 1 bins, exactly as onnx's reference computes them (which
    onnxruntime matches): every input is static, so the whole matrix is a constant under XLA too."""
    bins, dft, rate = (int(static(v, "MelWeightMatrix " + w).reshape(()))
                       for v, w in ((num_mel_bins, "num_mel_bins"), (dft_length, "dft_length"),
                                    (sample_rate, "sample_rate")))
    low = np.asarray(static(lower_edge_hertz, "lower_edge_hertz")).reshape(())
    high = np.asarray(static(upper_edge_hertz, "upper_edge_hertz")).reshape(())
    if bins <= 0 or dft <= 0 or rate <= 0 or not 0 <= low < high:
        raise Unsupported(f"MelWeightMatrix with num_mel_bins={bins}, dft_length={dft}, sample_rate={rate}, "
                          f"edges {low}..{high} Hz (needs positive sizes and 0 <= lower < upper)")
    spectrogram_bins = dft // 2 + 1
    k = np.arange(0, bins + 2)
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    hz = 700 * np.expm1((k * ((high_mel - low_mel) / k.shape[0]) + low_mel) / 2595 * np.log(10))
    edges = (((dft + 1) * hz) // rate).astype(int)
    if edges[-1] >= spectrogram_bins:
        raise Unsupported(f"MelWeightMatrix: upper_edge_hertz {high} lands on bin {edges[-1]}, past the "
                          f"{spectrogram_bins} bins of a {dft}-point DFT", hint="upper_edge_hertz <= sample_rate / 2")
    out = np.zeros((spectrogram_bins, bins))
    for i in range(bins):
        left, center, right = edges[i], edges[i + 1], edges[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            j = np.arange(left, center + 1)
            out[j, i] = (j - left) / float(center - left)
        if right > center:
            j = np.arange(center, right)
            out[j, i] = (right - j) / float(right - center)
    return out.astype(np_dtype(int(a.get("output_datatype", 1))))


def infer_mel(ctx: Ctx) -> list[TensorType]:
    bins, dft = ctx.const(0), ctx.const(1)
    rows = int(np.asarray(dft).reshape(())) // 2 + 1 if dft is not None else "spectrogram_bins"
    cols = int(np.asarray(bins).reshape(())) if bins is not None else "num_mel_bins"
    return [TensorType((rows, cols), _dtype_name(int(ctx.attrs.get("output_datatype", 1))))]


op("mel_weight_matrix", "MelWeightMatrix", infer=infer_mel, flops=r.output_flops(4), min_inputs=5, max_inputs=5,
   static_inputs=(0, 1, 2, 3, 4), attrs={"output_datatype": 1}, impl=mel_weight_matrix,
   doc="triangular mel filter bank of dft_length // 2 + 1 rows: a constant of its static inputs")
