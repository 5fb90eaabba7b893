"""The op table is built once, by one function from the family files' entries, and frozen: nothing adds or changes
an entry afterwards, and importing a family file registers nothing."""
import enum
import json

import pytest

import xcviz.ops as ops
from xcviz.ops import REGISTRY, build_registry
from xcviz.ops.registry import Entries, Group, OpDef, op


def test_the_table_refuses_every_change_after_it_is_built():
    relu = REGISTRY.get("Relu")
    assert REGISTRY.frozen and relu.cost_class == "elementwise"
    with pytest.raises(RuntimeError, match="frozen"):
        REGISTRY.add(OpDef("my_op"))
    assert not hasattr(REGISTRY, "replace")   # no entry is patched by name after it is declared
    for mapping in (REGISTRY.ops, REGISTRY._by_name):
        with pytest.raises(TypeError):
            mapping["relu"] = relu
    with pytest.raises(AttributeError):
        relu.cost_class = "dot"  # (an entry is a frozen dataclass)
    assert REGISTRY.get("Relu") is relu and REGISTRY.ops["relu"].cost_class == "elementwise"


def test_the_table_is_every_familys_entries_in_order():
    """build_registry from the same families gives the same table (same entries, same order); declaring an entry
    touches no table."""
    again = build_registry()
    assert again is not REGISTRY and list(again.ops) == list(REGISTRY.ops)
    assert all(again.ops[n] is REGISTRY.ops[n] for n in REGISTRY.ops)
    assert list(REGISTRY.ops) == [e.name for family in ops.FAMILIES for e in family.OPS]
    mine = Entries()
    entry = mine.op("my_op", "MyOp", groups=Group.ELEMENTWISE, cost_class="movement")
    assert list(mine) == [entry] and REGISTRY.get("MyOp") is None
    assert "my_op" in build_registry([type("Family", (), {"OPS": mine})]).ops


def test_a_name_in_two_families_is_refused():
    one, two = Entries(), Entries()
    one.op("my_op")
    two.op("my_op")
    with pytest.raises(ValueError, match="duplicate op my_op"):
        build_registry([type("F", (), {"OPS": one}), type("F", (), {"OPS": two})])


def test_an_unknown_fact_is_refused_where_it_is_declared():
    with pytest.raises(ValueError, match="cost_class"):
        op("my_op", cost_class="fast")
    with pytest.raises(ValueError):
        op("my_op", groups="elementwize")   # a group is a Group member, or its string value


def test_groups_are_a_typed_enum_printed_as_their_strings():
    assert issubclass(Group, enum.Enum) and all(isinstance(g, Group) for o in REGISTRY for g in o.groups)
    assert ops.ELEMENTWISE is Group.ELEMENTWISE and Group.ELEMENTWISE == "elementwise"
    assert json.dumps(sorted(REGISTRY.get("Exp").groups)) == '["elementwise", "expensive"]'
    assert f"{Group.BODY_CONTROL}" == "body_control"


def test_the_docs_example_entry_is_the_real_one():
    """docs/development.md shows adding an op with an entry from the code: it is there verbatim, and that entry's
    facts are the table's."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "development.md").read_text(encoding="utf-8")
    example = re.search(r"\*\*Adding an op\*\*.*?```python\n(.*?)```", docs, re.S).group(1)
    assert example in (root / "xcviz" / "ops" / "norm.py").read_text(encoding="utf-8")
    softmax = REGISTRY.get("Softmax")
    assert (softmax.cost_class, softmax.fusion, softmax.cpu_kernels, softmax.cpu_passes) == (
        "norm", "two_reductions", 4, (3, 5, 3)) and Group.REDUCTION in softmax.groups


def test_every_declared_entry_is_in_the_table():
    """A family file whose OPS is missing from FAMILIES (or that declares with registry.op, which adds to no list)
    would lose its entries silently: every `op("name", ...)` written under xcviz/ops/ is in the table."""
    import ast
    from pathlib import Path

    root = Path(ops.__file__).parent
    declared = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and \
                    getattr(node.func, "id", getattr(node.func, "attr", None)) == "op" and node.args and \
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                declared.add((path.relative_to(root).as_posix(), node.args[0].value))
    assert len(declared) > 300
    missing = sorted((f, n) for f, n in declared if n not in REGISTRY.ops and not f.startswith("registry"))
    assert not missing, f"declared but not in the table (add the module to xcviz.ops.FAMILIES): {missing}"
    assert {m.__name__ for m in ops.FAMILIES} >= {
        f"xcviz.ops.{p.relative_to(root).with_suffix('').as_posix().replace('/', '.')}".removesuffix(".__init__")
        for p in root.rglob("*.py") if p.name != "registry.py" and "\nOPS = Entries()" in p.read_text(encoding="utf-8")}
