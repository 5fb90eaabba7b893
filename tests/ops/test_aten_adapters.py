"""The aten adapter table is built by one explicit function (aten.adapters.build_adapters) from what each adapter
module declares: declaring fills no table, the order of imports changes nothing, and a name declared twice is
refused, as the op table's build does."""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from xcviz.ops import REGISTRY
from xcviz.ops.aten import Adapters, Spec
from xcviz.ops.aten.adapters import ADAPTERS, MODULES, TARGETS, build_adapters
from tests.support.paths import ROOT


def test_the_table_is_what_the_modules_declare_whatever_their_order():
    again, reversed_ = build_adapters(), build_adapters(tuple(reversed(MODULES)))
    assert dict(again.adapters) == dict(ADAPTERS) == dict(reversed_.adapters)
    assert dict(again.targets) == dict(TARGETS) == dict(reversed_.targets)
    assert sum(len(names) for m in MODULES for names, _, _ in m.ADAPTED.rows) == len(ADAPTERS) > 300
    assert TARGETS["addmm"] and all(REGISTRY.get(t) is not None for t in TARGETS.values())


def test_the_table_is_read_only_and_declaring_fills_none():
    with pytest.raises(TypeError):
        ADAPTERS["relu"] = None   # type: ignore[index]
    mine = Adapters()
    mine.aten("not_an_aten_op", target="relu")(lambda c: Spec("relu", (c.args[0],)))
    assert "not_an_aten_op" not in ADAPTERS and "not_an_aten_op" not in build_adapters().adapters
    extended = build_adapters((*MODULES, SimpleNamespace(ADAPTED=mine, __name__="mine")))
    assert extended.targets["not_an_aten_op"] == "relu" and len(extended.adapters) == len(ADAPTERS) + 1


def test_a_name_declared_twice_is_refused():
    twice = Adapters()
    twice.aten("relu", target="relu")(lambda c: Spec("relu", (c.args[0],)))
    with pytest.raises(ValueError, match="aten adapter relu declared twice"):
        build_adapters((*MODULES, SimpleNamespace(ADAPTED=twice, __name__="twice")))


def test_importing_an_adapter_module_first_changes_nothing():
    dump = ("from xcviz.ops.aten.adapters import ADAPTERS, TARGETS; import json; "
            "print(json.dumps([(k, TARGETS[k], ADAPTERS[k].__qualname__) for k in ADAPTERS]))")
    runs = [subprocess.run([sys.executable, "-c", first + dump], capture_output=True, text=True, cwd=ROOT, check=True)
            for first in ("", "import xcviz.ops.aten.grad; import xcviz.ops.aten.core; ")]
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)
