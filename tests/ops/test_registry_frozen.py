"""The op table is built once and frozen: nothing adds or changes an entry after xcviz.ops is imported."""
import pytest

from xcviz.ops import REGISTRY
from xcviz.ops.registry import OpDef


def test_the_table_refuses_every_change_after_it_is_built():
    relu = REGISTRY.get("Relu")
    assert REGISTRY.frozen and relu.cost_class == "elementwise"  # (the cost facts went on before it froze)
    for change in (lambda: REGISTRY.add(OpDef("my_op")), lambda: REGISTRY.replace("relu", cost_class="dot")):
        with pytest.raises(RuntimeError, match="frozen"):
            change()
    for mapping in (REGISTRY.ops, REGISTRY._by_name):
        with pytest.raises(TypeError):
            mapping["relu"] = relu
    with pytest.raises(AttributeError):
        relu.cost_class = "dot"  # (an entry is a frozen dataclass)
    assert REGISTRY.get("Relu") is relu and REGISTRY.ops["relu"].cost_class == "elementwise"
