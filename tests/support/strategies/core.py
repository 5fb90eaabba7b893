"""The one random-graph draw: a graph description (GraphSpec) made from a Profile of what a test needs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

InputSpec = tuple[str, tuple, str]   # a graph input: name, shape, dtype
Declared = tuple[tuple, str]         # a declared output type: shape, dtype


@dataclass
class NodeSpec:
    """One node as a test describes it; `planted` overwrites fields in the document form (deliberate defects)."""

    name: str
    op: str
    inputs: list[str]
    control_inputs: list[str] = field(default_factory=list)
    attrs: dict | None = None
    device: str | None = None
    scope: str | None = None
    compile: bool | None = None
    outputs: list[Declared] | None = None   # None: left to shape inference
    outputs_field: bool = False              # documents: write `outputs: [...]`, not `shape`/`dtype`
    known: bool = True                       # hand-built graphs: False marks an op opaque
    planted: dict[str, Any] = field(default_factory=dict)


@dataclass
class GraphSpec:
    name: str
    inputs: list[InputSpec]
    nodes: list[NodeSpec]
    outputs: list[str] | None = None         # None: documents leave the key out
    dims: dict | None = None


@dataclass(frozen=True)
class Rule:
    """How nodes of one op draw their inputs and attributes."""

    arity: int | tuple[int, int] = 1         # fixed, or drawn from the range
    attrs: SearchStrategy | None = None      # None: the profile's `attrs`
    pools: tuple = ()                        # per input position: graph inputs read there instead of the profile's
    readable: bool = True                    # False: later nodes never read it (data producers only)


NONE = st.none()


@dataclass(frozen=True)
class Profile:
    """What one test draws. Ops: first a group (repeat a group to weight it), then an op in it."""

    groups: tuple[tuple[str, ...], ...]
    inputs: SearchStrategy                   # -> list[InputSpec]
    nodes: tuple[int, int] = (1, 40)
    rules: dict[str, Rule] = field(default_factory=dict)
    default: Rule = Rule()
    name: str = "rand"
    readable_inputs: tuple[str, ...] | None = None   # the graph inputs nodes read (None: all)
    extra_refs: Callable[[int], list[str]] | None = None  # refs beyond inputs and earlier nodes, for node j
    unique_inputs: bool = False              # draw a node's inputs without repeats, then fill up with `pad`
    pad: str | None = None
    controls: int = 0                        # up to this many control inputs from earlier nodes
    controls_apart: bool = False             # a node never has the same node as data and control input
    attrs: SearchStrategy = NONE
    device: SearchStrategy = NONE
    scope: SearchStrategy = NONE
    compile: SearchStrategy = NONE
    opaque: frozenset = frozenset()          # ops marked known=False (hand-built graphs)
    declare: Callable | None = None          # (draw, spec, node) -> declared outputs or None
    decorate: Callable | None = None         # (draw, spec, node) -> None: any further per-node field
    outputs: Callable | None = None          # (spec) -> graph outputs; default: the last node
    dims: SearchStrategy = NONE
    shuffle: bool = False                    # list the nodes out of topological order


@st.composite
def sometimes(draw, strategy: SearchStrategy, one_in: int):
    """`strategy`'s value one time in `one_in`, else None (a field that is usually absent; drawn only when present)."""
    return draw(strategy) if draw(st.integers(0, one_in - 1)) == 0 else None


def last_node(spec: GraphSpec) -> list[str]:
    return [spec.nodes[-1].name] if spec.nodes else []


def _draw_inputs(draw, p: Profile, rule: Rule, j: int, graph_inputs: list[str], nodes: list[NodeSpec]) -> list[str]:
    earlier = [n.name for n in nodes if p.rules.get(n.op, p.default).readable]
    base = graph_inputs + earlier + (p.extra_refs(j) if p.extra_refs else [])
    k = rule.arity if isinstance(rule.arity, int) else draw(st.integers(*rule.arity))
    if p.unique_inputs:
        picked = draw(st.lists(st.sampled_from(earlier), max_size=k, unique=True)) if earlier else []
        return picked + [p.pad] * (k - len(picked))
    out = []
    for i in range(k):
        pool = list(rule.pools[i]) + earlier if i < len(rule.pools) and rule.pools[i] is not None else base
        out.append(draw(st.sampled_from(pool)))
    return out


@st.composite
def graph_specs(draw, p: Profile) -> GraphSpec:
    inputs = draw(p.inputs)
    spec = GraphSpec(p.name, inputs, [])
    graph_inputs = [v[0] for v in inputs if p.readable_inputs is None or v[0] in p.readable_inputs]
    for j in range(draw(st.integers(*p.nodes))):
        op = draw(st.sampled_from(draw(st.sampled_from(p.groups))))
        rule = p.rules.get(op, p.default)
        node = NodeSpec(f"n{j}", op, _draw_inputs(draw, p, rule, j, graph_inputs, spec.nodes))
        if p.controls and j:
            ctrl = draw(st.lists(st.sampled_from([n.name for n in spec.nodes]), max_size=p.controls))
            node.control_inputs = [c for c in sorted(set(ctrl)) if not (p.controls_apart and c in node.inputs)]
        node.attrs = draw(rule.attrs if rule.attrs is not None else p.attrs)
        node.device, node.scope, node.compile = draw(p.device), draw(p.scope), draw(p.compile)
        node.known = op not in p.opaque
        node.outputs = p.declare(draw, spec, node) if p.declare else None
        if p.decorate:
            p.decorate(draw, spec, node)
        spec.nodes.append(node)
    if p.shuffle:
        spec.nodes = list(draw(st.permutations(spec.nodes)))
    spec.outputs = p.outputs(spec) if p.outputs else last_node(spec)  # (the last node listed)
    spec.dims = draw(p.dims)
    return spec
