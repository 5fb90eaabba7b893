"""String and text ops: StringConcat and RegexFullMatch (native only) and TfIdfVectorizer (n-gram counts)."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, is_np
from .regex_re2 import compile_re2
from .registry import Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

NATIVE = dict(devices=frozenset(), jax_ok=False)


# ---- string ops ----------------------------------------------------------------------------------
def _text(s) -> str:
    return s.decode("utf-8") if isinstance(s, bytes) else str(s)


def _strings(x, name: str):
    x = np.asarray(x)
    if x.dtype.kind not in "OSU":
        raise Unsupported(f"{name} of a {x.dtype} tensor (it takes string tensors)")
    return x


def string_concat(xp, a, x, y):
    x, y = _strings(x, "StringConcat"), _strings(y, "StringConcat")
    try:
        out = np.frompyfunc(lambda s, t: _text(s) + _text(t), 2, 1)(x, y)
    except ValueError:
        raise Unsupported(f"StringConcat of shapes {x.shape} and {y.shape}, which do not broadcast") from None
    return np.asarray(out, dtype=object)


def regex_full_match(xp, a, x):
    x = _strings(x, "RegexFullMatch")
    texts = [_text(s) for s in x.reshape(-1)]
    rx = compile_re2(a.get("pattern"), texts)
    return np.array([rx.fullmatch(s) is not None for s in texts], dtype=bool).reshape(x.shape)


def infer_string_concat(ctx: Ctx) -> list[TensorType]:
    return [TensorType(r.broadcast(ctx.shape(0), ctx.shape(1)), "string")]


op("string_concat", "StringConcat", infer=infer_string_concat, flops=r.output_flops(1), min_inputs=2, max_inputs=2,
   impl=string_concat, **NATIVE, doc="elementwise concatenation of two string tensors (broadcast)")
op("regex_full_match", "RegexFullMatch", infer=lambda ctx: [TensorType(ctx.shape(0), "bool")], flops=r.input_flops(1),
   min_inputs=1, max_inputs=1, attrs={"pattern": None}, impl=regex_full_match, **NATIVE,
   doc="whether each string matches the RE2 `pattern` in full (google-re2, else Python re on linear patterns; syntax one of them lacks refused)")


# ---- TfIdfVectorizer ------------------------------------------------------------------------------
def _tfidf_grams(a) -> tuple[list[tuple], list[int]]:
    """The pool's n-grams of sizes min_gram_length..max_gram_length and their ids (pool order, every size
    counted): ngram_counts[k] is where the (k+1)-grams start in the pool."""
    if a.get("pool_int64s") and a.get("pool_strings"):
        raise Unsupported("TfIdfVectorizer with both pool_int64s and pool_strings")
    pool = [_text(p) if isinstance(p, (bytes, str)) else int(p)
            for p in a.get("pool_int64s") or a.get("pool_strings") or []]
    counts = [int(c) for c in a.get("ngram_counts") or []]
    lo, hi = int(a.get("min_gram_length", 1)), int(a.get("max_gram_length", 1))
    seen: set[tuple] = set()
    grams, ids = [], []
    for k, start in enumerate(counts):
        size, end = k + 1, counts[k + 1] if k + 1 < len(counts) else len(pool)
        for p in range(start, end - size + 1, size):
            gram = tuple(pool[p:p + size])
            if gram in seen:  # onnxruntime refuses it too; onnx's reference would count it under its last id
                raise Unsupported(f"TfIdfVectorizer: the n-gram {list(gram)} is in the pool twice")
            seen.add(gram)
            if lo <= size <= hi:
                grams.append(gram)
                ids.append(len(seen) - 1)
    return grams, ids


def _tfidf_setup(a, x, ids: list[int]):
    """mode, output size, each counted gram's output index and weight (None: no weights)."""
    mode = str(a.get("mode", "TF")).upper()
    if mode not in ("TF", "IDF", "TFIDF"):
        raise Unsupported(f"TfIdfVectorizer mode {mode!r} (ONNX has TF, IDF, TFIDF)")
    if x.ndim not in (1, 2):
        raise Unsupported(f"TfIdfVectorizer of a rank-{x.ndim} input (needs [C] or [B, C])")
    indexes, weights = [int(i) for i in a.get("ngram_indexes") or []], a.get("weights")
    size = max(indexes, default=-1) + 1
    if ids and max(ids) >= len(indexes) or weights and len(weights) != len(indexes):
        raise Unsupported(f"TfIdfVectorizer: {len(indexes)} ngram_indexes and {len(weights or [])} weights for "
                          f"a pool of {max(ids, default=-1) + 1} n-grams (one each)")
    out = [indexes[g] for g in ids]
    if len(set(out)) < len(out) or min(out, default=0) < 0:
        raise Unsupported("TfIdfVectorizer: ngram_indexes repeat or are negative (output coordinates are unique)")
    w = np.asarray([float(weights[g]) for g in ids], np.float32) if weights else None
    return mode, size, out, w


def _weigh(mode, w, counts):
    """Per-gram counts [rows, grams] weighed by `mode` and the ONNX spec's per-n-gram weights (i-th weight for the
    i-th n-gram of the pool, as onnxruntime does; onnx's reference indexes them by output coordinate instead)."""
    if mode == "TF":
        return counts
    if mode == "IDF":
        hit = (counts > 0).astype(np.float32)
        return hit * w if w is not None else hit
    return counts * w if w is not None else counts


def tfidf_vectorizer(xp, a, x):
    """Counts of the pool's n-grams in each row, item gaps 1..max_skip_count + 1 (unigrams once), weighed by
    `mode`, at their output coordinates. The pool is static: each (size, gap) compares every window with every
    gram of that size (XLA: StridedSlice, Equal, Min, Sum) and a 0/1 matrix places the results (MatMul)."""
    grams, ids = _tfidf_grams(a)
    mode, size, out_idx, w = _tfidf_setup(a, x, ids)
    strings = np.dtype(x.dtype).kind in "OSU"
    if strings and not is_np(xp):
        raise Unsupported("TfIdfVectorizer of string tensors under XLA (XLA has no string type)")
    x2 = x.reshape((1, -1)) if x.ndim == 1 else x
    y = xp.zeros((x2.shape[0], size), np.float32)
    for n in sorted({len(g) for g in grams}):
        sel = [k for k, g in enumerate(grams) if len(g) == n]
        onto = np.zeros((len(sel), size), np.float32)
        onto[np.arange(len(sel)), [out_idx[k] for k in sel]] = 1
        counts = xp.zeros((x2.shape[0], len(sel)), np.float32)
        for skip in range(1, (1 if n == 1 else int(a.get("max_skip_count", 0)) + 1) + 1):
            starts = np.arange(max(x2.shape[1] - skip * (n - 1), 0))
            if not starts.size:
                continue
            win = x2[:, starts[:, None] + skip * np.arange(n)[None, :]]  # [rows, starts, n]
            if strings:
                table = {grams[k]: j for j, k in enumerate(sel)}
                hits = np.zeros(counts.shape, np.float32)
                for row, ws in enumerate(win):
                    for t in ws:
                        j = table.get(tuple(_text(v) for v in t))
                        if j is not None:
                            hits[row, j] += 1
                counts = counts + hits
            else:  # compared in int64: no pool value wraps into the input's range
                pool = np.asarray([grams[k] for k in sel], np.int64)
                eq = xp.min((win.astype(np.int64)[:, :, None, :] == pool[None, None]).astype(np.int32), axis=-1)
                counts = counts + xp.sum(eq, axis=1).astype(np.float32)
        y = y + _weigh(mode, w[sel] if w is not None else None, counts) @ onto
    return y.reshape((size,)) if x.ndim == 1 else y


def infer_tfidf(ctx: Ctx) -> list[TensorType]:
    size = max((int(i) for i in ctx.attrs.get("ngram_indexes") or []), default=-1) + 1
    s = ctx.shape(0)
    return [TensorType(None if s is None else ((size,) if len(s) <= 1 else (s[0], size)), "float32")]


op("tfidf_vectorizer", "TfIdfVectorizer", infer=infer_tfidf, flops=r.input_flops(8), min_inputs=1, max_inputs=1,
   attrs={"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0, "ngram_counts": None,
          "ngram_indexes": None, "pool_int64s": None, "pool_strings": None, "weights": None},
   impl=tfidf_vectorizer, doc="n-gram counts (with skips) of a static pool per row, weighed TF / IDF / TFIDF")
