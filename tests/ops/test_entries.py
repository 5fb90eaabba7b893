"""The op table: each op is one entry in one family file, and its fields agree with each other and with the
code that reads them (execution, constant folding, input synthesis, `xcviz ops`, docs/node_tests.md)."""
from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from xcviz.ir import TensorType
from xcviz.ops import REGISTRY, SHAPE_CONSUMER, SOURCE
from xcviz.ops.rules import Ctx
from tests.support.paths import ROOT

OPS_DIR = os.path.join(ROOT, "xcviz", "ops")
SHARED = {"xcviz.ops.rules", "xcviz.ops.arrays"}


def _declared() -> dict[str, list[str]]:
    """Canonical op name -> the modules whose source declares it with a literal `op("name", ...)` call."""
    where: dict[str, list[str]] = {}
    for dirpath, _, files in sorted(os.walk(OPS_DIR)):   # the families, and the framework tables in tf/, aten/, pytorch/
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            module = os.path.relpath(path, os.path.dirname(os.path.dirname(OPS_DIR)))[:-3].replace(os.sep, ".")
            module = module[: -len(".__init__")] if module.endswith(".__init__") else module
            tree = ast.parse(open(path, encoding="utf-8").read())
            for n in ast.walk(tree):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "op" and n.args \
                        and isinstance(n.args[0], ast.Constant):
                    where.setdefault(n.args[0].value, []).append(module)
    return where


DECLARED = _declared()
OPS = list(REGISTRY)


def test_every_op_is_one_entry_in_one_family_file():
    assert set(DECLARED) == set(REGISTRY.ops)
    assert {n: m for n, m in DECLARED.items() if len(m) != 1} == {}
    for o in OPS:
        for alias in (o.name, *o.aliases):
            assert REGISTRY.get(alias) is o, alias


@pytest.mark.parametrize("o", OPS, ids=lambda o: o.name)
def test_rules_and_code_live_with_the_entry(o):
    """Shape rule, FLOP rule and implementations come from the entry's own file or the shared helpers."""
    home = DECLARED[o.name][0]
    for fn in (o.infer, o.flops, o.impl, o.jax_impl):
        if fn is not None:
            assert fn.__module__ in {home, *SHARED}, (o.name, fn.__module__)


@pytest.mark.parametrize("o", OPS, ids=lambda o: o.name)
def test_execution_fields_agree(o):
    # XLA compiles it somewhere <=> it has a JAX lowering (a claim without code would fail at run time)
    if o.devices:
        assert o.impl is not None and o.jax_ok and o.jax is not None, o.name
    else:
        assert o.jax is None and o.reason, o.name
    if o.jax_impl is not None:
        assert o.impl is not None, "a JAX lowering needs the native reference next to it"
    assert (o.native is None) == (o.impl is None)


@pytest.mark.parametrize("o", [o for o in OPS if o.impl is not None], ids=lambda o: o.name)
def test_impl_takes_the_declared_arity(o):
    sig = inspect.signature(o.impl)
    for k in {o.min_inputs, o.max_inputs if o.max_inputs is not None else o.min_inputs + 3}:
        sig.bind(np, {}, *[None] * k)  # raises TypeError when the entry's arity and its code disagree


@pytest.mark.parametrize("o", OPS, ids=lambda o: o.name)
def test_static_and_positive_inputs_are_input_slots(o):
    for slots in (o.static_inputs, o.positive_inputs):
        assert list(slots) == sorted(set(slots))
        assert all(0 <= k and (o.max_inputs is None or k < o.max_inputs) for k in slots), (o.name, slots)
    if o.static_inputs or o.positive_inputs:
        assert o.impl is not None  # the facts describe how the implementation is fed


def test_positive_inputs_are_where_negative_values_give_nan():
    """The entries that ask for positive inputs are the ones whose reference turns a negative value there into NaN."""
    checked = set()
    for o in OPS:
        for k in o.positive_inputs:
            args = [np.ones((1, 2, 2, 2) if j == 0 else (2,), np.float32) for j in range(o.min_inputs)]
            args[k] = -args[k]
            with np.errstate(all="ignore"):
                out = o.native({**o.attrs}, *args)
            out = out[0] if isinstance(out, tuple) else out
            assert np.isnan(out).any(), (o.name, k)
            checked.add(o.name)
    assert {"sqrt", "rsqrt", "log", "batchnorm"} <= checked


def test_folding_ops_depend_on_no_tensor_data():
    folds = {o.name for o in OPS if o.folds}
    assert folds == {"const", "shape", "tf.Const", "tf.Shape"}  # (TF graphs: the same two under TF names)
    for name in folds:
        assert REGISTRY.ops[name].groups & {SOURCE, SHAPE_CONSUMER}
    assert REGISTRY.ops["shape"].native({}, np.zeros((2, 3))).tolist() == [2, 3]


@pytest.mark.parametrize("o", OPS, ids=lambda o: o.name)
def test_every_compiled_op_states_its_flops(o):
    """Ops XLA compiles state their FLOPs (a rule or an explicit zero); only fallback ops may leave them unknown.
    With unknown shapes a rule says 'unknown' (None) or a number, never raises."""
    if o.devices:
        assert o.flops is not None, o.name
    if o.flops is not None:
        n_in = max(o.min_inputs, 1) if o.max_inputs != 0 else 0
        ctx = Ctx([TensorType()] * n_in, dict(o.attrs), [], [TensorType()], 1)
        flops = o.flops(ctx, [TensorType()])
        assert flops is None or isinstance(flops, int), (o.name, flops)


def test_ops_command_lists_the_entries(run_cli):
    code, out, _ = run_cli("ops", "--json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["ops"]}
    assert list(rows) == sorted(REGISTRY.ops)
    for o in OPS:
        assert rows[o.name]["aliases"] == list(o.aliases)
        assert rows[o.name]["compilable"] == {d: d in o.devices for d in ("cpu", "gpu", "tpu")}


def test_node_test_table_claims_what_the_entries_claim():
    """docs/node_tests.md is generated from the entries: its 'claimed' column is the entry's XLA support."""
    with open(os.path.join(ROOT, "docs", "node_tests.md"), encoding="utf-8") as f:
        table = f.read().split("\n## ")[0]  # the per-op table (the sections after it have tables of their own)
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| ") and not line.startswith("| op ")]
    assert len(rows) >= 80
    for name, claimed in rows:
        assert (claimed.strip() == "yes") == bool(REGISTRY.ops[name.strip()].devices), name


@pytest.mark.slow
def test_the_op_table_imports_no_jax():
    code = "import sys, xcviz.ops; print(sorted(m for m in ('jax', 'onnx', 'scipy') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr


def test_the_symbolic_rules_are_on_the_entries():
    """The shape rules for symbolic shape values (sym_infer) and the value rules on symbolic entries (sym_value)
    are fields of the entries the shape and value passes read; each on an op whose value the value pass computes."""
    from xcviz.ir.symbolic import Sym
    from xcviz.ops import VALUE_RULE

    assert {o.name for o in OPS if o.sym_infer} == {"reshape", "expand", "tile", "constant_of_shape", "range", "slice",
                                                     "tf.Reshape", "tf.BroadcastTo", "tf.Tile", "tf.Fill", "tf.Range"}
    assert {o.name for o in OPS if o.sym_value} == {"cast", "div", "min", "max", "equal", "less", "greater", "abs",
                                                     "tf.Cast", "tf.FloorDiv", "tf.Minimum", "tf.Maximum", "tf.Equal",
                                                     "tf.Less", "tf.Greater", "tf.Abs"}
    assert all(VALUE_RULE in o.groups for o in OPS if o.sym_infer or o.sym_value)
    batch = np.array([Sym.of("batch") * 6, Sym.of(7)], object)
    got = REGISTRY.get("Div").sym_value({}, batch, np.array([Sym.of(3)], object))
    assert list(got) == [Sym.of("batch") * 2, Sym.of(2)]   # integer division, truncated as ONNX's Div on ints
    assert list(REGISTRY.get("Min").sym_value({}, batch, np.array([Sym.of(2**31 - 1)], object))) == list(batch)
