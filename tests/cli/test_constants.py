"""The CLI's copies of lower layers' constants (copied, not imported, so that `xcviz --help` imports none of those
layers) equal their sources: a choice added below shows up in the flags, or this fails."""
import pytest

from xcviz.cli import analysis, base, census, running

COPIES = [
    (lambda: base.STRATEGIES, "xcviz.clustering.options", "STRATEGIES"),
    (lambda: base.DEVICES, "xcviz.ops.registry", "DEVICES"),
    (lambda: census.EXECUTORS, "xcviz.census.executors", "EXECUTORS"),
    (lambda: running.MODES, "xcviz.runtime.execute", "MODES"),
    (lambda: running.DEFAULT_MAX_ELEMENTS, "xcviz.runtime.inputs", "DEFAULT_MAX_ELEMENTS"),
    (lambda: running.NATIVES, "xcviz.runtime.native", "RUNTIMES"),
    (lambda: analysis.SORTS, "xcviz.render.ordering", "SORTS"),
    (lambda: analysis.FRAMEWORKS, "xcviz.render.ops_lookup", "FRAMEWORKS"),
]


@pytest.mark.parametrize("copy,module,name", COPIES, ids=[f"{m}.{n}" for _, m, n in COPIES])
def test_each_copied_constant_equals_its_source(copy, module, name):
    import importlib

    assert copy() == getattr(importlib.import_module(module), name)


def test_every_copy_the_cli_says_it_made_is_checked():
    """Each `(not imported: keeps --help fast)` or `# = module.NAME` note in cli/ names a copy listed above."""
    import inspect
    import re

    noted = set()
    for mod in (analysis, base, census, running):
        for line in inspect.getsource(mod).splitlines():
            m = re.match(r"([A-Z_]+) = .*# = ", line)
            if m:
                noted.add(m.group(1))
    checked = {n for n in ("STRATEGIES", "DEVICES", "EXECUTORS", "MODES", "DEFAULT_MAX_ELEMENTS", "NATIVES", "SORTS",
                           "FRAMEWORKS")}
    assert noted - {"FORMATS"} == checked  # (FORMATS: what loaders.detect_format returns, checked below)


def test_the_formats_flag_names_formats_detect_format_returns():
    """--format takes what loaders.detect_format tells apart for a file read from stdin (no suffix): its text formats
    and ONNX's binary one (TensorFlow and torch programs are told by their suffix alone)."""
    from xcviz.loaders import detect_format

    samples = {"yaml": b"name: g\n", "json": b'{"name": "g"}', "xcir": b"graph g(\n", "onnx": b"\x08\x07\x12\x00"}
    assert {detect_format("-", data) for data in samples.values()} == set(samples) == set(base.FORMATS)
