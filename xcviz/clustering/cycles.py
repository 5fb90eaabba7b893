"""A dynamic-topological-order cycle detector (Pearce-Kelly), faithful to XLA's GraphCycles.

Every detail that decides *which* merges happen is reproduced: ranks start as node ids, an edge that
contradicts the order triggers a bounded forward/backward search and a re-ranking of only the
affected nodes, successor sets are insertion-ordered and erase by swapping with the last element,
and contracting an edge keeps the endpoint with more edges.
"""
from __future__ import annotations


class GraphCycles:
    __slots__ = ("out", "ins", "out_pos", "in_pos", "rank", "visited", "alive", "_deltaf", "_deltab")

    def __init__(self, n: int) -> None:
        self.out: list[list[int]] = [[] for _ in range(n)]
        self.ins: list[list[int]] = [[] for _ in range(n)]
        self.out_pos: list[dict[int, int]] = [{} for _ in range(n)]
        self.in_pos: list[dict[int, int]] = [{} for _ in range(n)]
        self.rank = list(range(n))
        self.visited = [False] * n
        self.alive = [True] * n
        self._deltaf: list[int] = []
        self._deltab: list[int] = []

    # -- ordered sets (insertion order, erase = swap with last) ------------------------------
    @staticmethod
    def _insert(seq: list[int], pos: dict[int, int], x: int) -> bool:
        if x in pos:
            return False
        pos[x] = len(seq)
        seq.append(x)
        return True

    @staticmethod
    def _erase(seq: list[int], pos: dict[int, int], x: int) -> None:
        i = pos.pop(x)
        last = seq.pop()
        if last != x:
            seq[i] = last
            pos[last] = i

    # -- Pearce-Kelly ------------------------------------------------------------------------
    def insert_edge(self, x: int, y: int) -> bool:
        """Add x -> y; False (and no edge) if it would close a cycle."""
        if x == y:
            return False
        if not self._insert(self.out[x], self.out_pos[x], y):
            return True
        self._insert(self.ins[y], self.in_pos[y], x)
        rank = self.rank
        if rank[x] <= rank[y]:
            return True
        if self._forward(y, rank[x]) is not None:
            self._erase(self.out[x], self.out_pos[x], y)
            self._erase(self.ins[y], self.in_pos[y], x)
            self._clear(self._deltaf)
            return False
        self._backward(x, rank[y])
        self._reorder()
        return True

    def remove_edge(self, x: int, y: int) -> None:
        self._erase(self.out[x], self.out_pos[x], y)
        self._erase(self.ins[y], self.in_pos[y], x)

    def _forward(self, n: int, upper: int) -> list[int] | None:
        """DFS from n over nodes ranked below `upper`; returns the path to the node ranked `upper`, else None."""
        rank, visited, out = self.rank, self.visited, self.out
        deltaf = self._deltaf
        deltaf.clear()
        stack = [(n, -1)]
        parent: dict[int, int] = {}
        while stack:
            n, p = stack.pop()
            if visited[n]:
                continue
            visited[n] = True
            parent[n] = p
            deltaf.append(n)
            for w in out[n]:
                rw = rank[w]
                if rw == upper:
                    path = []
                    while n != -1:
                        path.append(n)
                        n = parent[n]
                    path.reverse()
                    return path
                if not visited[w] and rw < upper:
                    stack.append((w, n))
        return None

    def _backward(self, n: int, lower: int) -> None:
        rank, visited, ins = self.rank, self.visited, self.ins
        deltab = self._deltab
        deltab.clear()
        stack = [n]
        while stack:
            n = stack.pop()
            if visited[n]:
                continue
            visited[n] = True
            deltab.append(n)
            for w in ins[n]:
                if not visited[w] and lower < rank[w]:
                    stack.append(w)

    def _reorder(self) -> None:
        rank, visited = self.rank, self.visited
        deltab = sorted(self._deltab, key=rank.__getitem__)
        deltaf = sorted(self._deltaf, key=rank.__getitem__)
        nodes = deltab + deltaf
        ranks = sorted(rank[w] for w in nodes)
        for w, r in zip(nodes, ranks):
            rank[w] = r
            visited[w] = False

    def _clear(self, nodes: list[int]) -> None:
        for w in nodes:
            self.visited[w] = False

    def reachable_path(self, x: int, y: int) -> list[int] | None:
        """A path x -> ... -> y (as the nodes before y), or None when y is not reachable."""
        if x == y:
            return [x]
        if self.rank[x] >= self.rank[y]:
            return None
        path = self._forward(x, self.rank[y])
        self._clear(self._deltaf)
        return path

    def contract_edge(self, a: int, b: int) -> tuple[int | None, list[int] | None]:
        """Merge b into a along the edge a -> b. Returns (surviving node, None), or (None, blocking path)."""
        self.remove_edge(a, b)
        path = self.reachable_path(a, b)
        if path is not None:
            self.insert_edge(a, b)
            return None, path[1:]
        if len(self.ins[b]) + len(self.out[b]) > len(self.ins[a]) + len(self.out[a]):
            a, b = b, a
        out_b, in_b = self.out[b], self.ins[b]
        self.out[b], self.ins[b], self.out_pos[b], self.in_pos[b] = [], [], {}, {}
        for y in out_b:
            self._erase(self.ins[y], self.in_pos[y], b)
        for y in in_b:
            self._erase(self.out[y], self.out_pos[y], b)
        self.alive[b] = False
        for y in out_b:
            self.insert_edge(a, y)
        for y in in_b:
            self.insert_edge(y, a)
        return a, None

    def post_order(self) -> list[int]:
        """Live nodes, consumers before producers (descending rank), as XLA's AllNodesInPostOrder."""
        rank = self.rank
        return sorted((i for i, live in enumerate(self.alive) if live), key=lambda i: -rank[i])
