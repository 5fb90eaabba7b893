"""TensorFlow's random ops with TF's own bits: Philox4x32-10 streams as TF's CPU kernels draw them (`tf.<Op>`).

Stateful ops (`RandomUniform`, `RandomStandardNormal`, `RandomUniformInt(shape; seed, seed2)`) start a fresh
stream at counter 0 from the key (seed) and counter high half (seed2), as a kernel's first run does; seed =
seed2 = 0 means "nondeterministic" in TF and is refused here. Stateless ops (`StatelessRandomGetKeyCounter`,
`StatelessRandomUniformV2`/`NormalV2`, `StatelessRandomUniform`/`Normal`) scramble the seed pair as TF's
GenerateKey does. Each group of four outputs is one Philox block (uniform floats: the 23 mantissa bits of
one word in [1, 2) minus 1; normals: Box-Muller on word pairs), so the values equal TF's, up to the ulp of
its float sin/cos/log. Shapes, seeds and keys are static: under XLA the stateless values are constants."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import Unsupported, ints, np_dtype, static
from ..registry import SOURCE, Entries
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

_W = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))
_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_MASK = np.uint64(0xFFFFFFFF)


def philox(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 of uint32 counters [n, 4] under a 64-bit key (two words): uint32 [n, 4]."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for rnd in range(10):
        p0, p1 = _M[0] * c[0], _M[1] * c[2]
        hi0, lo0, hi1, lo1 = p0 >> np.uint64(32), p0 & _MASK, p1 >> np.uint64(32), p1 & _MASK
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        if rnd < 9:
            k0, k1 = (k0 + _W[0]) & _MASK, (k1 + _W[1]) & _MASK
    return np.stack(c, axis=1).astype(np.uint32)


def _blocks(counter: tuple[int, int, int, int], key: tuple[int, int], n_blocks: int) -> np.ndarray:
    """n_blocks consecutive Philox outputs from `counter` (a 128-bit counter, carried across words): uint32 [n, 4]."""
    g = np.arange(n_blocks, dtype=np.uint64)
    lo = np.uint64(counter[0] | counter[1] << 32)
    hi = np.uint64(counter[2] | counter[3] << 32)
    with np.errstate(over="ignore"):
        new_lo = lo + g
        new_hi = hi + (new_lo < lo).astype(np.uint64)
    words = np.stack([new_lo & _MASK, new_lo >> np.uint64(32), new_hi & _MASK, new_hi >> np.uint64(32)], axis=1)
    return philox(words.astype(np.uint32), key)


def _uint32_to_float(x: np.ndarray) -> np.ndarray:
    return ((x & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)


def _uint_to_double(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    bits = ((hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)) & np.uint64((1 << 52) - 1)
    return (bits | np.uint64(1023 << 52)).view(np.float64) - 1.0


def _words(counter, key, n_words: int) -> np.ndarray:
    return _blocks(counter, key, -(-n_words // 4)).reshape(-1)[:n_words] if n_words else np.zeros(0, np.uint32)


def uniform(counter, key, shape: tuple, dtype) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(dtype)
    if dt == np.float64:  # two words per value (kResultElementCount 2): one block gives two doubles
        w = _blocks(counter, key, -(-n // 2)).reshape(-1, 2)[:n]
        return _uint_to_double(w[:, 0], w[:, 1]).reshape(shape)
    if dt == np.float16:  # the low 10 bits of each word as the mantissa
        m = (_words(counter, key, n) & np.uint32(0x3FF)).astype(np.uint16) | np.uint16(15 << 10)
        return (m.view(np.float16) - np.float16(1.0)).reshape(shape)
    return _uint32_to_float(_words(counter, key, n)).astype(dt).reshape(shape)


def normal(counter, key, shape: tuple, dtype) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    if np.dtype(dtype) == np.float64:
        raise Unsupported("float64 normal samples (TF draws them from four words each): not reproduced")
    w = _words(counter, key, n + (n & 1))
    u1 = np.maximum(_uint32_to_float(w[0::2]), np.float32(1.0e-7))
    v1 = np.float32(2.0 * np.pi) * _uint32_to_float(w[1::2])
    u2 = np.sqrt(np.float32(-2.0) * np.log(u1))
    out = np.empty(u1.size * 2, np.float32)
    out[0::2], out[1::2] = np.sin(v1) * u2, np.cos(v1) * u2
    return out[:n].astype(np.dtype(dtype)).reshape(shape)


def uniform_int(counter, key, shape: tuple, lo: int, hi: int, dtype) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    span = hi - lo
    if span <= 0:
        raise Unsupported(f"RandomUniformInt needs minval < maxval (got {lo}, {hi})")
    if np.dtype(dtype) == np.int64:
        w = _blocks(counter, key, -(-n // 2)).reshape(-1, 2)[:n].astype(np.uint64)
        bits = w[:, 0] | (w[:, 1] << np.uint64(32))
        return (lo + (bits % np.uint64(span)).astype(np.int64)).reshape(shape)
    bits = _words(counter, key, n).astype(np.uint64)
    return (lo + (bits % np.uint64(span)).astype(np.int64)).astype(np.dtype(dtype)).reshape(shape)


def _split64(v: int) -> tuple[int, int]:
    v &= (1 << 64) - 1
    return v & 0xFFFFFFFF, v >> 32


def _stateful_stream(a) -> tuple[tuple, tuple]:
    seed, seed2 = int(a.get("seed") or 0), int(a.get("seed2") or 0)
    if seed == 0 and seed2 == 0:
        raise Unsupported("a random op with seed = seed2 = 0 draws nondeterministic values in TensorFlow",
                          hint="set tf.random.set_seed or an op seed to compare with TF")
    return (0, 0, *_split64(seed2)), _split64(seed)


def _shape(v, what: str) -> tuple:
    return tuple(ints(v, what))


def _random_uniform(xp, a, shape):
    counter, key = _stateful_stream(a)
    return uniform(counter, key, _shape(shape, "RandomUniform shape"), np_dtype(a.get("dtype") or "float32"))


def _random_normal(xp, a, shape):
    counter, key = _stateful_stream(a)
    return normal(counter, key, _shape(shape, "RandomStandardNormal shape"), np_dtype(a.get("dtype") or "float32"))


def _random_int(xp, a, shape, lo, hi):
    counter, key = _stateful_stream(a)
    lo_, hi_ = (int(np.asarray(static(v, "RandomUniformInt bound")).reshape(())) for v in (lo, hi))
    return uniform_int(counter, key, _shape(shape, "RandomUniformInt shape"), lo_, hi_,
                       np_dtype(a.get("Tout") or str(np.asarray(lo).dtype)))


def key_counter(seed) -> tuple[tuple, tuple]:
    """TF's GenerateKey: the seed pair scrambled through one Philox block -> (counter words, key words)."""
    s = np.asarray(static(seed, "stateless seed")).reshape(-1).astype(np.int64)
    if s.size != 2:
        raise Unsupported(f"a stateless seed has 2 values, not {s.size}")
    s0, s1 = (int(v) & ((1 << 64) - 1) for v in s)
    mix = philox(np.array([[s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32]], np.uint32),
                 (0x3EC8F720, 0x02461E29))[0]
    return (0, 0, int(mix[2]), int(mix[3])), (int(mix[0]), int(mix[1]))


def _get_key_counter(xp, a, seed):
    counter, key = key_counter(seed)
    return (np.array([key[0] | key[1] << 32], np.uint64),
            np.array([counter[0] | counter[1] << 32, counter[2] | counter[3] << 32], np.uint64))


def _from_key_counter(key, counter) -> tuple[tuple, tuple]:
    k = int(np.asarray(static(key, "stateless key")).reshape(-1)[0])
    c = [int(v) for v in np.asarray(static(counter, "stateless counter")).reshape(-1)[:2]]
    return (*_split64(c[0]), *_split64(c[1] if len(c) > 1 else 0)), _split64(k)


def _alg_ok(alg) -> None:
    a = int(np.asarray(static(alg, "stateless alg")).reshape(()))
    if a not in (1, 3):  # RNG_ALG_PHILOX, RNG_ALG_AUTO_SELECT (Philox on CPU)
        raise Unsupported(f"stateless RNG algorithm {a} (only Philox, 1, and auto-select, 3, are reproduced)")


def _stateless_v2(kind):
    def fn(xp, a, shape, key, counter, alg):
        _alg_ok(alg)
        c, k = _from_key_counter(key, counter)
        return kind(c, k, _shape(shape, "stateless shape"), np_dtype(a.get("dtype") or "float32"))
    return fn


def _stateless_v1(kind):
    def fn(xp, a, shape, seed):
        c, k = key_counter(seed)
        return kind(c, k, _shape(shape, "stateless shape"), np_dtype(a.get("dtype") or "float32"))
    return fn


def _random_type(ctx) -> list[TensorType]:
    shape = ctx.const(0)
    dt = ctx.attrs.get("dtype") or ctx.attrs.get("Tout") or "float32"
    if shape is None:
        return list(ctx.outputs[:1]) or [TensorType(None, dt)]
    return [TensorType(tuple(int(d) for d in np.asarray(shape).reshape(-1)), dt)]


def _key_counter_type(ctx) -> list[TensorType]:
    return [TensorType((1,), "uint64"), TensorType((2,), "uint64")]


stateful = dict(groups=SOURCE, devices=frozenset(), infer=_random_type, flops=r.output_flops(8), static_inputs=(0,),
                reason="stateful random op: TF's auto-clustering never compiles it (its XLA kernel exists, tf2xla)")
op("tf.RandomUniform", **stateful, min_inputs=1, max_inputs=1, attrs={"dtype": "float32", "seed": 0, "seed2": 0},
   impl=_random_uniform, doc="TF RandomUniform(shape; dtype, seed, seed2): [0, 1), TF's Philox stream")
op("tf.RandomStandardNormal", **stateful, min_inputs=1, max_inputs=1,
   attrs={"dtype": "float32", "seed": 0, "seed2": 0}, impl=_random_normal,
   doc="TF RandomStandardNormal(shape; dtype, seed, seed2): TF's Philox stream through Box-Muller")
op("tf.RandomUniformInt", **stateful, min_inputs=3, max_inputs=3, attrs={"seed": 0, "seed2": 0},
   impl=_random_int, doc="TF RandomUniformInt(shape, minval, maxval; seed, seed2): minval + bits mod (max - min)")

stateless = dict(infer=_random_type, flops=r.output_flops(8), static_inputs=(0, 1, 2, 3), attrs={"dtype": "float32"})
op("tf.StatelessRandomGetKeyCounter", devices=xla_devices("StatelessRandomGetKeyCounter"), min_inputs=1,
   max_inputs=1, num_outputs=2, static_inputs=(0,), infer=_key_counter_type, flops=r.zero_flops,
   impl=_get_key_counter, doc="TF StatelessRandomGetKeyCounter(seed) -> key uint64[1], counter uint64[2]")
op("tf.StatelessRandomUniformV2", **stateless, devices=xla_devices("StatelessRandomUniformV2"), min_inputs=4,
   max_inputs=4, impl=_stateless_v2(uniform), doc="TF StatelessRandomUniformV2(shape, key, counter, alg; dtype)")
op("tf.StatelessRandomNormalV2", **stateless, devices=xla_devices("StatelessRandomNormalV2"), min_inputs=4,
   max_inputs=4, impl=_stateless_v2(normal), doc="TF StatelessRandomNormalV2(shape, key, counter, alg; dtype)")
op("tf.StatelessRandomUniform", infer=_random_type, flops=r.output_flops(8), static_inputs=(0, 1),
   attrs={"dtype": "float32"}, devices=xla_devices("StatelessRandomUniform"), min_inputs=2, max_inputs=2,
   impl=_stateless_v1(uniform), doc="TF StatelessRandomUniform(shape, seed; dtype)")
op("tf.StatelessRandomNormal", infer=_random_type, flops=r.output_flops(8), static_inputs=(0, 1),
   attrs={"dtype": "float32"}, devices=xla_devices("StatelessRandomNormal"), min_inputs=2, max_inputs=2,
   impl=_stateless_v1(normal), doc="TF StatelessRandomNormal(shape, seed; dtype)")
