"""Deterministic generator of ML-like graphs of any size in the xcviz schema (YAML and JSON).

The shape is what real exported models look like to the clustering pass: mostly a chain of layers,
with residual skips (``add(x, f(x))``), fan-out/fan-in branches (three small branches joined by adds),
~10% ops XLA cannot compile (random, string, Python callbacks, ``compile: false``), occasional shape
consumers and constants. Every tensor is ``float32[B, H]`` so shape inference stays trivial and the
benchmark measures xcviz, not the rules. Same ``(n, seed)`` -> byte-identical file.

    python benchmarks/generate.py 100000 -o /tmp/g.json        # or .yaml
"""
from __future__ import annotations

import argparse
import json
import random

H = 64
UNSUPPORTED = ("random_normal_like", "string_normalizer", "py_func", "print")
UNARY = ("relu", "gelu", "tanh", "sigmoid", "silu", "exp", "neg", "abs")


def generate(n: int, seed: int = 0, scopes: bool = False) -> dict:
    """A graph mapping with exactly `n` nodes; `scopes`: each node gets a `scope` (stage/block/unit, 10 of
    each per level, by position), as a model's layers give its nodes."""
    rng = random.Random(seed)
    nodes: list[dict] = []
    cur = "x"
    skip = "x"

    def add(op: str, inputs: list[str], **extra) -> str:
        name = f"n{len(nodes)}"
        nd = {"name": name, "op": op, "inputs": inputs}
        nd.update(extra)
        nodes.append(nd)
        return name

    def unsupported(x: str) -> str:
        op = rng.choice(UNSUPPORTED)
        if op in ("py_func", "print"):
            return add(op, [x], shape=["B", H], dtype="float32")
        return add(op, [x])

    while len(nodes) < n:
        left = n - len(nodes)
        r = rng.random()
        if left < 8:
            cur = add(rng.choice(UNARY), [cur])
        elif r < 0.40:                      # linear layer + activation
            cur = add("matmul", [cur, "w"])
            cur = add("add", [cur, "b"])
            cur = add(rng.choice(UNARY), [cur])
        elif r < 0.55:                      # residual block: skip from the last block start
            y = add(rng.choice(UNARY), [cur])
            y = add("mul", [y, "b"])
            cur = add("add", [skip, y])
            skip = cur
        elif r < 0.70:                      # fan-out into three branches, fan-in by adds
            a = add(rng.choice(UNARY), [cur])
            b = add(rng.choice(UNARY), [cur])
            c = add("matmul", [cur, "w"])
            if rng.random() < 0.3:
                c = unsupported(c)
            s = add("add", [a, b])
            cur = add("add", [s, c])
        elif r < 0.80:                      # shape consumer + constant (phase 0 / zero-size ops)
            add("shape", [cur])
            k = add("const", [], attrs={"value": 0.5})
            cur = add("mul", [cur, k])
        elif r < 0.88:                      # normalisation
            cur = add("layernorm", [cur])
            cur = add("identity", [cur])
        elif r < 0.94:                      # unsupported op in the main chain
            cur = unsupported(cur)
        elif r < 0.97:                      # an op forced off
            cur = add(rng.choice(UNARY), [cur], compile=False)
        else:                               # an op placed on another device
            cur = add(rng.choice(UNARY), [cur], device="gpu:0")
    return {
        "name": f"mlgraph_{n}",
        "dims": {"B": 8},
        "inputs": [{"name": "x", "shape": ["B", H], "dtype": "float32"},
                   {"name": "w", "shape": [H, H], "dtype": "float32"},
                   {"name": "b", "shape": [H], "dtype": "float32"}],
        "nodes": _scoped(nodes[:n]) if scopes else nodes[:n],
        "outputs": [nodes[min(n, len(nodes)) - 1]["name"]],
    }


def _scoped(nodes: list[dict]) -> list[dict]:
    """A `scope` per node: stage{s}/block{b}/unit{u}, 10 stages of 10 blocks of 10 units, by position."""
    n = len(nodes)
    for i, nd in enumerate(nodes):
        u = i * 1000 // n
        nd["scope"] = f"stage{u // 100}/block{u // 10 % 10}/unit{u % 10}"
    return nodes


def _yaml_scalar(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _yaml_flow(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_yaml_flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_yaml_flow(x) for x in v) + "]"
    return _yaml_scalar(v)


def to_yaml(g: dict) -> str:
    """Block style at the top, one flow mapping per node: the layout of graphs/seed_demo.yaml."""
    out = [f"name: {g['name']}", f"dims: {_yaml_flow(g['dims'])}", "inputs:"]
    out += [f"  - {_yaml_flow(v)}" for v in g["inputs"]]
    out.append("nodes:")
    out += [f"  - {_yaml_flow(nd)}" for nd in g["nodes"]]
    out.append(f"outputs: {_yaml_flow(g['outputs'])}")
    return "\n".join(out) + "\n"


def to_json(g: dict) -> str:
    """One node per line, like `json.dumps` with a small indent would make readable."""
    head = {k: v for k, v in g.items() if k != "nodes"}
    body = ",\n".join("  " + json.dumps(nd, separators=(", ", ": ")) for nd in g["nodes"])
    text = json.dumps(head, separators=(", ", ": "))
    return text[:-1] + ', "nodes": [\n' + body + "\n]}\n"


def write(n: int, path: str, seed: int = 0, scopes: bool = False) -> str:
    g = generate(n, seed, scopes)
    text = to_json(g) if path.endswith(".json") else to_yaml(g)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nodes", type=int)
    ap.add_argument("-o", "--output", required=True, help="file name ending in .json or .yaml")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scopes", action="store_true", help="a scope per node: stage/block/unit")
    a = ap.parse_args()
    write(a.nodes, a.output, a.seed, a.scopes)


if __name__ == "__main__":
    main()
