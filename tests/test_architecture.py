"""The package's shape: no import circles, short modules, and imports that only point down the layers.

Every import counts, function-level (lazy) ones included: a lazy import still ties the two modules together.
The layers run from the command line down to the IR (cli -> pipeline -> analysis -> render -> runtime ->
clustering -> cost -> loaders -> passes -> ops -> ir); see LAYERS. Private names stay in their package, and
renderers only render."""
from __future__ import annotations

import ast
import glob
import os
from functools import cache

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "xcviz")
MAX_LINES = 400

# Modules allowed over MAX_LINES, each one concept that cannot be split (path relative to xcviz/: why).
LONG_MODULES: dict[str, str] = {}

# Top-level modules and packages of xcviz/, top layer first. A module may import from its own layer and the
# layers below it, never from one above. A new top-level name must be placed here.
LAYERS: list[set[str]] = [
    {"__init__", "__main__", "cli", "samples", "notebook"},  # command line, public API, notebook display
    {"pipeline", "conformance", "conformance_cache", "conformance_doc", "torch_compile", "census"},  # load + options + cluster + stats; ONNX node-test runs (and their cache); the torch.compile backend; census
    {"analysis"},                                    # diff, check, sweep: functions of analyses that return data
    {"render"},                                      # tables, JSON, DOT/SVG, HTML: functions of the results
    {"runtime"},                                     # execution, JAX compilation, validation
    {"clustering"},
    {"cost"},
    {"loaders"},                                     # read -> parse -> build, then the passes that make the graph whole
    {"passes", "verify"},
    {"ops"},
    {"ir"},
    {"errors", "progress", "fileio", "memory", "hardware", "htmltable"},  # no knowledge of graphs
]


@cache
def modules() -> dict[str, str]:
    """Dotted module name -> file, for every .py file under xcviz/ (a package is named by its __init__)."""
    base = os.path.dirname(PACKAGE)
    out = {}
    for folder, _, files in os.walk(PACKAGE):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                out[name.removesuffix(".__init__")] = path
    return out


def _is_package(name: str) -> bool:
    return modules()[name].endswith("__init__.py")


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The xcviz modules one import statement names: `from a import b` names a, and a.b when b is a module."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            parts = module.split(".") if _is_package(module) else module.split(".")[:-1]
            parts = parts[:len(parts) - (node.level - 1)]
            source = ".".join(parts + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [source] + [f"{source}.{a.name}" for a in node.names]
    return [n for n in names if n in modules()]


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the xcviz modules it imports anywhere in its body. Importing a package one is inside
    (`from .. import x` or `from . import y`) is not an edge: Python runs that package first anyway."""
    graph = {}
    for name, path in modules().items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges.update(t for t in _targets(name, node) if t != name and not name.startswith(t + "."))
        graph[name] = frozenset(edges)
    return graph


def circles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"xcviz.{top} is in no layer: place it in LAYERS (tests/test_architecture.py)")


def test_circles_finds_a_cycle_and_nothing_else():
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"}),
             "e": frozenset()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": frozenset({"b"}), "b": frozenset()}) == []


def test_import_graph_sees_lazy_imports():
    # runtime.execute imports the clustering pass inside a function only
    assert "xcviz.clustering" in import_graph()["xcviz.runtime.execute"]


def test_no_import_circles():
    found = circles(import_graph())
    assert not found, "import circles (every import counts, lazy ones too):\n" + "\n".join(
        "  " + " <-> ".join(c) for c in found)


def test_no_module_over_max_lines():
    over = {}
    for path in modules().values():
        rel = os.path.relpath(path, PACKAGE).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES and rel not in LONG_MODULES:
            over[rel] = n
    assert not over, f"modules over {MAX_LINES} lines (split by concept, or name one in LONG_MODULES with why): " + \
        ", ".join(f"{p} ({n})" for p, n in sorted(over.items(), key=lambda kv: -kv[1]))


def test_long_module_allowlist_is_current():
    short = []
    for rel in sorted(LONG_MODULES):
        with open(os.path.join(PACKAGE, rel), encoding="utf-8") as f:
            if sum(1 for _ in f) <= MAX_LINES:
                short.append(rel)
    assert not short, f"short now, remove from LONG_MODULES: {short}"


def test_every_module_is_in_a_layer():
    for name in modules():
        _layer(name)


def test_imports_only_point_down_the_layers():
    upward = sorted(f"{m} imports {t}" for m, targets in import_graph().items() for t in targets
                    if _layer(t) < _layer(m))
    assert not upward, "imports up the layers (see LAYERS):\n  " + "\n  ".join(upward)


@pytest.mark.parametrize("low, high", [("ir", "clustering"), ("ops", "render"), ("ir", "runtime"),
                                       ("ops", "cli"), ("clustering", "render"), ("runtime", "cli")])
def test_layer_order_examples(low, high):
    assert _layer(f"xcviz.{low}") > _layer(f"xcviz.{high}")


# Op knowledge lives in the op table (OpDef fields and groups); outside ops/ code asks the registry
# (`REGISTRY.names(fusion="free")`). These modules keep tables keyed by op names for a stated reason.
OP_NAME_TABLES: dict[str, str] = {}


def _op_name_tables() -> dict[str, list[int]]:
    """Module-level or nested assignments outside ops/ whose set, tuple, list or dict keys are mostly op names."""
    from xcviz.ops import REGISTRY

    names = set(REGISTRY._by_name) | set(REGISTRY.ops)

    def strings(node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args \
                and node.func.id in ("frozenset", "set", "tuple", "list"):
            return strings(node.args[0])
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if isinstance(node, ast.Dict):
            return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        return []

    found: dict[str, list[int]] = {}
    for path in sorted(glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True)):
        rel = os.path.relpath(path, PACKAGE).replace(os.sep, "/")
        if rel.startswith("ops/"):
            continue
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                s = strings(node.value)
                hits = [x for x in s if x in names]
                if len(hits) >= 2 and 2 * len(hits) >= len(s):
                    found.setdefault(rel, []).append(node.lineno)
    return found


def test_no_op_name_sets_outside_the_op_table():
    stray = {rel: lines for rel, lines in _op_name_tables().items() if rel not in OP_NAME_TABLES}
    assert not stray, f"op-name tables outside ops/ (put the fact on the OpDef): {stray}"


def test_op_name_table_allowlist_is_current():
    assert set(OP_NAME_TABLES) <= set(_op_name_tables())


def test_the_cost_facts_are_on_the_entries():
    from xcviz.ops import REGISTRY, VOLATILE

    softmax = REGISTRY.get("Softmax")
    assert (softmax.cost_class, softmax.fusion, softmax.cpu_kernels, softmax.cpu_passes) == ("norm", "two_reductions", 4, (3, 5, 3))
    assert REGISTRY.get("Conv").cost_class == "conv" and REGISTRY.get("Conv").fusion == "library"
    assert REGISTRY.get("Relu").cost_class == "elementwise" and REGISTRY.get("Relu").fusion == "loop"
    assert "random_uniform" in REGISTRY.names(VOLATILE) and REGISTRY.get("RandomUniform") is REGISTRY.ops["random_uniform"]


# `from X import _name` from another module: a private name is its module's own (shared: make it public, or move
# it to its one home). Where one must cross, it is listed here with why ("importing module: name" -> reason).
PRIVATE_IMPORTS_ACROSS: dict[str, str] = {}


def _package(module: str) -> str:
    return module if _is_package(module) else module.rpartition(".")[0]


def _private_imports() -> list[str]:
    """'module: name' for each `from X import _name` whose X is another module (private modules excepted)."""
    found = []
    for name, path in modules().items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _targets(name, node)[0] if _targets(name, node) else None
            if source is None:
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and f"{source}.{alias.name}" not in modules() and source != name:
                    found.append(f"{name}: {alias.name}")
    return sorted(found)


def test_a_module_s_package():
    assert _package("xcviz.ops.conv") == "xcviz.ops" and _package("xcviz.loaders") == "xcviz.loaders"
    assert _package("xcviz.loaders.tensorflow.attrs") == "xcviz.loaders.tensorflow" != _package("xcviz.loaders.schema")


def test_no_private_imports_across_modules():
    stray = [p for p in _private_imports() if p not in PRIVATE_IMPORTS_ACROSS]
    assert not stray, "private names imported from another module (make them public where shared, or move " \
        "them to their one home):\n  " + "\n  ".join(stray)


def test_private_import_allowlist_is_current():
    assert set(PRIVATE_IMPORTS_ACROSS) <= set(_private_imports())


# render/ renders: from the packages that compute it takes types, constants and formatters only. Each name
# it imports from them is listed, with why; a new one means computing in a renderer (do it in analysis/ or
# the pipeline and hand the renderer the result).
COMPUTING = ("clustering", "cost", "runtime", "loaders", "passes", "pipeline", "analysis")
RENDER_IMPORTS: dict[str, str] = {
    "clustering.Clustering": "type", "cost.Stats": "type", "clustering.bodies.BodyClustering": "type",
    "clustering.result.PHASE_NAMES": "the phases' display names",
    "clustering.fx_compare.RULES": "the rules' table, shown as it is",
    "cost.params.stored_parameters": "the definition of a stored parameter (cost.params owns it): the picture folds exactly those",
    "cost.coverage.unknown_text": "formatter", "cost.symbolic.SymbolicCost": "type",
    "cost.symbolic.format_bytes_expr": "formatter", "cost.symbolic.format_count_expr": "formatter",
    "clustering.explain.replay": "the animation's frames replay the recorded attempt log: no decision is made",
    "cost.symbolic.symbolic_cost": "pending: the symbolic formulas belong in the cost model's Stats",
    "cost.symbolic.free_dims": "which dimensions are unbound: a fact of the graph, read for the hint",
    "loaders.tensorflow.protos.message_classes": "export: a GraphDef is written with the loader's messages",
    "loaders.tensorflow.read_graphdef": "export: the source GraphDef is rewritten with the clusters",
    "loaders.tensorflow.attrs.tf_dtype_enum": "export: TF's dtype numbers",
    "loaders.torch_export.program_for_graph": "Model Explorer ids: read from the source .pt2's program",
}


def _render_imports() -> set[str]:
    """'package.module.name' for each name render/ imports from a computing package."""
    found = set()
    for name, path in modules().items():
        if not name.startswith("xcviz.render"):
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            targets = _targets(name, node) if isinstance(node, (ast.Import, ast.ImportFrom)) else []
            if not targets or targets[0].split(".")[1] not in COMPUTING:
                continue
            if isinstance(node, ast.Import):
                found.add(targets[0].removeprefix("xcviz."))
            else:
                found.update(f"{targets[0].removeprefix('xcviz.')}.{a.name}" for a in node.names)
    return found


def test_render_only_renders():
    stray = sorted(_render_imports() - set(RENDER_IMPORTS))
    assert not stray, "render/ imports from packages that compute (compute in analysis/ or the pipeline, " \
        "pass the result): " + ", ".join(stray)


def test_render_import_allowlist_is_current():
    assert set(RENDER_IMPORTS) <= _render_imports()


def _class_defs() -> dict[str, list[str]]:
    """Class name -> the modules that define a class of that name."""
    out: dict[str, list[str]] = {}
    for name, path in modules().items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(name)
    return out


def test_one_graph_class_and_it_is_read_only():
    """One Graph (ir/graph.py), frozen, whose nodes are always one Nodes: no second shape of a graph or of its
    node list (the NodeSeq/LazyIndex/list trio this replaced)."""
    import dataclasses

    from xcviz.ir import Graph, Node, Nodes, TensorType, Value

    defs = _class_defs()
    assert defs["Graph"] == ["xcviz.ir.graph"]
    assert defs["Nodes"] == ["xcviz.ir.nodes"] and "NodeSeq" not in defs and "LazyIndex" not in defs
    assert Graph.__dataclass_params__.frozen and Value.__dataclass_params__.frozen
    assert Node.__struct_config__.frozen
    g = Graph("g", [Value("x", TensorType((2,), "float32"))], [Node("a", "relu", "relu", ("x",))], ["a"])
    assert type(g.nodes) is Nodes and type(g.inputs) is tuple and type(g.outputs) is tuple
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.nodes = Nodes.of([])
    with pytest.raises(TypeError):
        g.dims["n"] = 1
