"""The model's own layers: one scope path per node and the tree of scopes derived from them (never a second copy).

A node's scope path ("model/layers.0/self_attn"; "" is the root) is, in this order: its `scope` field (xcviz's
YAML/JSON/text forms; TF's `_XlaInternalScope`), its torch module path (`Node.module`, from `nn_module_stack`:
"model.layers.0.self_attn" reads as model / layers.0 / self_attn, a numbered child joined to its list), or the
path of its name (ONNX `/model/layers.0/self_attn/MatMul` and TF `a/b/op`: everything before the last `/`).
Only the `scope` field is also an XLA scope (a clustering barrier); module and name paths group, never bar.

`scope_tree(graph)` makes the tree once per graph and keeps it on the graph, as Graph.index is kept.
`fold_repeats(tree, clustering)` finds sibling scopes that are the same block (same ops, same wiring, same
clustering decisions), such as a decoder's 32 layers, to show once as "×32"."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .types import parse_ref

SEP = "/"


def name_scope(name: str) -> str:
    """The scope path of a node name: everything before its last '/' ('/model/layers.0/MatMul' -> 'model/layers.0')."""
    if SEP not in name:
        return ""
    return clean(name.rpartition(SEP)[0])


def module_scope(module: str) -> str:
    """A torch module path as a scope path: 'model.layers.0.self_attn' -> 'model/layers.0/self_attn' (a module's
    own name never holds a '.'; a numbered child of a ModuleList stays one level with its list, as ONNX names it)."""
    out: list[str] = []
    for part in module.split("."):
        if not part:
            continue
        if part.isdigit() and out:
            out[-1] = f"{out[-1]}.{part}"
        else:
            out.append(part)
    return SEP.join(out)


def clean(path: str) -> str:
    """A scope path without empty levels ('/a//b/' -> 'a/b')."""
    if not path:
        return ""
    if path[0] != SEP and path[-1] != SEP and SEP * 2 not in path:
        return path
    return SEP.join(p for p in path.split(SEP) if p)


def node_scope(node) -> str:
    """One node's scope path (see the module's doc for the rule)."""
    return _scope(node.scope, node.module, node.name)


def _scope(scope, module, name) -> str:
    if scope:
        return clean(scope)
    if module:
        return module_scope(module)
    return name_scope(name)


def parent_of(path: str) -> str:
    return path.rpartition(SEP)[0] if path else ""


def cut(path: str, depth: int) -> str:
    """The path's first `depth` levels."""
    if depth <= 0 or not path:
        return ""
    parts = path.split(SEP, depth)
    return path if len(parts) <= depth else SEP.join(parts[:depth])


@dataclass(frozen=True, slots=True, eq=False)
class Scope:
    """One scope: its path ("" for the root), its own name (the last level), its child scopes in model order
    (by the first node under each), the nodes directly in it, and where its nodes lie in the tree's preorder
    (`span`: descendants are tree.order[span[0]:span[1]])."""

    path: str
    name: str
    children: tuple["Scope", ...]
    nodes: tuple[int, ...]
    span: tuple[int, int]
    first: int  # the first node under it (model order); -1 for an empty root

    @property
    def size(self) -> int:
        """How many nodes are under it, nested ones included."""
        return self.span[1] - self.span[0]

    @property
    def depth(self) -> int:
        return 0 if not self.path else self.path.count(SEP) + 1

    def __repr__(self) -> str:
        return f"Scope({self.path!r}: {self.size} nodes, {len(self.children)} children)"


class ScopeTree:
    """The tree of scopes of a graph's nodes (scope_tree(graph) makes it once per graph)."""

    def __init__(self, paths: Sequence[str], nodes=None) -> None:
        self.paths: list[str] = list(paths)  # scope path per node
        self.graph_nodes = nodes              # the graph's Nodes (fold_repeats reads ops and inputs)
        n = len(self.paths)
        if not any(self.paths):  # no layers: every node at the root (made without a pass per node)
            self.order = list(range(n))
            self.root = Scope("", "", (), tuple(self.order), (0, n), 0 if n else -1)
            self._scopes = {"": self.root}
            return
        by_path: dict[str, list[int]] = {}
        for i, p in enumerate(self.paths):
            got = by_path.get(p)
            if got is None:
                by_path[p] = [i]
            else:
                got.append(i)
        kids: dict[str, list[str]] = {"": []}
        for p in by_path:  # in order of each path's first node: children come in model order
            if p in kids:
                continue
            cur = ""
            for part in p.split(SEP):
                nxt = f"{cur}{SEP}{part}" if cur else part
                if nxt not in kids:
                    kids[nxt] = []
                    kids[cur].append(nxt)
                cur = nxt
        # preorder of the scopes (iterative: a hostile file may nest deeply), then build children first
        pre: list[str] = []
        stack = [""]
        while stack:
            p = stack.pop()
            pre.append(p)
            stack.extend(reversed(kids[p]))
        order: list[int] = []
        start: dict[str, int] = {}
        for p in pre:
            start[p] = len(order)
            order.extend(by_path.get(p, ()))
        self.order: list[int] = order  # node indices, scope by scope in preorder
        end: dict[str, int] = {}
        made: dict[str, Scope] = {}
        for p in reversed(pre):
            children = tuple(made[c] for c in kids[p])
            own = tuple(by_path.get(p, ()))
            hi = children[-1].span[1] if children else start[p] + len(own)
            end[p] = hi
            firsts = [c.first for c in children] + ([own[0]] if own else [])
            made[p] = Scope(p, p.rpartition(SEP)[2], children, own, (start[p], hi), min(firsts) if firsts else -1)
        self.root: Scope = made[""]
        self._scopes = made

    # -- lookups -------------------------------------------------------------
    def scope_of(self, i: int) -> str:
        """Node i's scope path."""
        return self.paths[i]

    def find(self, path: str) -> Scope:
        """The scope of this path (leading/trailing '/' ignored); KeyError names the nearest existing parent."""
        key = clean(path)
        got = self._scopes.get(key)
        if got is None:
            raise KeyError(path)
        return got

    def __contains__(self, path: str) -> bool:
        return clean(path) in self._scopes

    def __iter__(self):
        """Every scope, preorder (the root first)."""
        stack = [self.root]
        while stack:
            s = stack.pop()
            yield s
            stack.extend(reversed(s.children))

    def __len__(self) -> int:
        return len(self._scopes)

    def descendants(self, path: str) -> tuple[int, ...]:
        """Every node index under the scope, nested ones included, in model order."""
        lo, hi = self.find(path).span
        return tuple(sorted(self.order[lo:hi]))

    def depth_cut(self, depth: int) -> tuple[str, ...]:
        """Each node's scope path cut to `depth` levels (0: all at the root)."""
        memo: dict[str, str] = {}
        out = []
        for p in self.paths:
            c = memo.get(p)
            if c is None:
                c = memo[p] = cut(p, depth)
            out.append(c)
        return tuple(out)

    @property
    def max_depth(self) -> int:
        return max((s.depth for s in self._scopes.values()), default=0)

    @property
    def flat(self) -> bool:
        """Whether the graph has no scopes at all (every node at the root)."""
        return not self.root.children

    def __repr__(self) -> str:
        return f"ScopeTree({len(self._scopes)} scopes over {len(self.paths)} nodes)"


def scope_tree(graph) -> ScopeTree:
    """The graph's scope tree, made on first use and kept on the graph (a Graph is read-only, so it holds)."""
    got = graph.__dict__.get("scope_tree")
    if got is None:
        nodes = graph.nodes
        names, scopes, modules = nodes.column("name"), nodes.column("scope"), nodes.column("module")
        if not any(scopes) and not any(modules) and SEP not in "".join(names):  # (no layers: the common big case)
            got = ScopeTree([""] * len(names), nodes)
        else:
            got = ScopeTree(list(map(_scope, scopes, modules, names)), nodes)
        graph.__dict__["scope_tree"] = got
    return got


# -- repeated blocks ---------------------------------------------------------------------------------------
_NUMBERED = re.compile(r"[._-]\d+$")


def stem(name: str) -> str:
    """A scope's name without its list number ('layers.3' -> 'layers', 'dense_12' -> 'dense'; 'fc1' and 'block'
    stay: a number written into a name is a different layer, not a copy)."""
    return _NUMBERED.sub("", name) or name


@dataclass(frozen=True, slots=True)
class Fold:
    """Sibling scopes that are one repeated block: `same` are identical (shown once, as ×len(same), opened by
    the first), `differ` are the other numbered siblings of the same name that are not."""

    parent: str
    stem: str
    same: tuple[str, ...]
    differ: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.same)

    @property
    def representative(self) -> str:
        return self.same[0]

    @property
    def label(self) -> str:
        first, last = self.same[0].rpartition(SEP)[2], self.same[-1].rpartition(SEP)[2]
        return f"{first} … {last} ×{self.count}"


def _columns(tree: ScopeTree) -> tuple:
    """(names, ops, inputs, outputs, parsed): the node columns `signature` reads; `parsed[i]`, node i's
    inputs as Refs, is filled on first use (a node is in the signature of each scope above it: its
    references are parsed once, not once per scope)."""
    nodes = tree.graph_nodes
    return (*(nodes.column(f) for f in ("name", "op", "inputs", "outputs")), [None] * len(nodes))


def signature(tree: ScopeTree, scope: Scope, clustering=None, columns: tuple | None = None) -> tuple:
    """What makes two scopes the same block: per node under it, in model order, its op, its scope relative to
    the block's, where each input comes from (a node of the block by local position, else outside), its output
    types, and its clustering decision (its cluster numbered within the block, or its reason code)."""
    members = tree.descendants(scope.path)
    names, ops, inputs, outputs, parsed = columns or _columns(tree)
    local = {names[i]: k for k, i in enumerate(members)}
    cut_at = len(scope.path) + 1 if scope.path else 0
    cluster_of = getattr(clustering, "cluster_of", None)
    codes = getattr(clustering, "code", None)
    renumber: dict[int, int] = {}
    out = []
    for i in members:
        refs = parsed[i]
        if refs is None:
            refs = parsed[i] = tuple(map(parse_ref, inputs[i]))
        wires = [(local.get(name, -1), port) for name, port in refs]
        if cluster_of is None:
            decision = None
        elif cluster_of[i] >= 0:
            decision = renumber.setdefault(cluster_of[i], len(renumber))
        else:
            decision = codes[i]
        out.append((ops[i], tree.paths[i][cut_at:], tuple(wires), tuple(map(str, outputs[i])), decision))
    return tuple(out)


def fold_repeats(tree: ScopeTree, clustering=None, min_count: int = 2) -> tuple[Fold, ...]:
    """Every repeated block of the tree, parents before children: among the children of a scope that share a
    numbered name (`stem`), the largest set with equal `signature`s, when it has at least `min_count`. The
    folded copies (all but the first of `same`) are not searched again; the first stands for them."""
    folds: list[Fold] = []
    columns = _columns(tree) if not tree.flat else None
    stack = [tree.root]
    while stack:
        scope = stack.pop()
        groups: dict[str, list[Scope]] = {}
        for c in scope.children:
            groups.setdefault(stem(c.name), []).append(c)
        hidden: set[str] = set()
        for key, members in groups.items():
            if len(members) < min_count:
                continue
            by_sig: dict[tuple, list[str]] = {}
            for m in members:
                by_sig.setdefault(signature(tree, m, clustering, columns), []).append(m.path)
            best = max(by_sig.values(), key=len)  # (the first of equal size: dicts keep order)
            if len(best) < min_count:
                continue
            chosen = set(best)
            folds.append(Fold(scope.path, key, tuple(best), tuple(m.path for m in members if m.path not in chosen)))
            hidden.update(best[1:])
        stack.extend(reversed([c for c in scope.children if c.path not in hidden]))
    return tuple(folds)


def fold_index(folds: Sequence[Fold]) -> dict[str, Fold]:
    """Each folded scope path (every one of `same`) -> its fold."""
    return {p: f for f in folds for p in f.same}
