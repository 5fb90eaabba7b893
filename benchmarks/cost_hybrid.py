"""Whole-model times for cost_accuracy.py: the hybrid run (clusters compiled, the rest native) with the
parameters resident on the device, as XLA keeps them, and the all-native run, each one call timed."""
from __future__ import annotations

import time

import numpy as np

from xcviz.ir import format_ref
from xcviz.runtime.execute import make_plan
from xcviz.runtime.measure import resident
from xcviz.runtime.node import eval_node


class WholeModel:
    """One model under one clustering: `hybrid()` and `native()` run it once each and return seconds."""

    def __init__(self, graph, clustering, feeds: dict, cache) -> None:
        self.graph, self.feeds = graph, feeds
        self.plan = make_plan(graph, clustering)
        self.cache = cache
        self.fed: dict[int, dict] = {}    # per cluster: its resident parameter entries
        self.native()                     # fails here (not timed) when a node cannot run natively
        self.hybrid()

    def _env(self) -> dict:
        env = {v.name: self.feeds[v.name] for v in self.graph.inputs}
        env.update((n.name, self.feeds[n.name]) for n in self.graph.nodes if n.op == "placeholder")
        return env

    def native(self) -> float:
        nodes, env = self.graph.nodes, self._env()
        t0 = time.perf_counter()
        for kind, u in self.plan.units:
            for i in ([u] if kind == "node" else self.plan.clustering.clusters[u]):
                self._node(nodes[i], env)
        return time.perf_counter() - t0

    def hybrid(self) -> float:
        nodes, env = self.graph.nodes, self._env()
        t0 = time.perf_counter()
        for kind, u in self.plan.units:
            if kind == "node":
                self._node(nodes[u], env)
                continue
            spec = self.plan.specs[u]
            fed = self.fed.get(u)
            if fed is None:  # the first call places the parameters, once
                comp, _ = self.cache.get(self.graph, spec, env, self.plan.baked[u])
                params = resident(self.graph, spec, {r: env[r] for r in spec.entries})
                fed = self.fed[u] = {"comp": comp, "params": {r: v for r, v in params.items()
                                                              if not isinstance(v, np.ndarray)}}
            args = {r: fed["params"].get(r, env.get(r)) for r in spec.entries}
            for r, v in zip(spec.exits, fed["comp"](args, spec)):
                env[r] = v
        return time.perf_counter() - t0

    @staticmethod
    def _node(node, env: dict) -> None:
        if node.op == "placeholder":  # a TF placeholder node: the feed of its name, as execute does
            return
        for k, v in enumerate(eval_node(node, [env[r] if r else None for r in node.inputs])):
            env[format_ref(node.name, k)] = np.asarray(v)
