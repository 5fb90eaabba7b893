"""Cluster formation frame by frame, replayed from the recorded merge attempts.

Frames: one per successful merge, in the order the pass made them, then one final frame after the minimum-size
filter, so a run with M merges has exactly M + 1 frames. A phase boundary is not a picture of its own (the
clusters do not change between phases): the first merge frame of each phase is flagged `phase_start` and its
caption opens with "phase N begins"; a phase that merges nothing leaves no frame. Refused merges change nothing
either: they are listed, in order, in the caption of the next frame before its merge ("refused ...: would
create a cycle via p1"); refusals after the last merge go to the final frame."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..clustering import Clustering
from ..clustering.explain import replay
from ..clustering.result import PHASE_NAMES
from ..cost import Stats
from ..ir import Graph
from .tables import cluster_color
from .view import PENDING, Group, View, final_view, ops_word


@dataclass
class Frame:
    index: int
    kind: str                     # "merge" or "final"
    phase: str                    # "phase 1", "greedy", "final"
    phase_start: bool
    decision: str                 # "phase 1: merged r1 into cluster of m1"
    refused: list[str] = field(default_factory=list)
    view: View | None = None

    @property
    def caption(self) -> str:
        lines = [f"{self.phase} begins"] if self.phase_start else []
        lines += self.refused[:6] + ([f"… {len(self.refused) - 6} more refused"] if len(self.refused) > 6 else [])
        return "\n".join(lines + [self.decision])


def count_merges(clustering: Clustering) -> int:
    return len(clustering.attempts) - clustering.refused_count()


def name_set(names: list[str], members: list[int]) -> str:
    if len(members) == 1:
        return names[members[0]]
    shown = ", ".join(names[v] for v in members[:4])
    return "{" + shown + (f", … +{len(members) - 4}" if len(members) > 4 else "") + "}"


def build_frames(graph: Graph, clustering: Clustering, stats: Stats, title: str | None = None) -> list[Frame]:
    """Every frame with its View; the last one is the final picture (the same as `xcviz render`)."""
    from .tables import title as default_title

    head = title or default_title(graph, clustering)
    names = [nd.name for nd in graph.nodes]
    n = len(names)
    code = [None if clustering.candidate[i] else (clustering.code[i] or "fallback") for i in range(n)]
    groups: dict[int, list[int]] = {}      # first member -> members, for groups of two or more
    frames: list[Frame] = []
    refused: list[str] = []
    last_phase: int | None = None
    for a, prod, cons in replay(clustering, n):
        phase = PHASE_NAMES.get(a.phase, f"phase {a.phase}")
        if not a.merged:
            refused.append(f"{phase}: refused {names[a.src]} → {names[a.dst]}: {a.reason}")
            continue
        if set(prod) == set(cons):
            continue
        merged = sorted(prod + cons)
        for part in (prod, cons):
            groups.pop(part[0], None)
        groups[merged[0]] = merged
        starts = a.phase != last_phase
        last_phase = a.phase
        if a.phase == -1:   # greedy grows the current cluster by the next node in list order
            decision = f"{phase}: merged {names[a.dst]} into cluster of {names[a.src]}"
        else:
            decision = f"{phase}: merged {name_set(names, prod)} into cluster of {names[a.dst]}"
        view = _frame_view(graph, clustering, groups, code, head, merged[0])
        frames.append(Frame(len(frames), "merge", phase, starts, decision, refused, view))
        refused = []
    final = final_view(graph, clustering, stats, head)
    frames.append(Frame(len(frames), "final", "final", False, final_text(clustering, names), refused, final))
    total = len(frames)
    for f in frames:
        f.view.caption = f"frame {f.index + 1}/{total} · {f.caption}"
    return frames


def _frame_view(graph: Graph, clustering: Clustering, groups: dict[int, list[int]], code: list[str | None],
                title: str, current: int) -> View:
    group_of = [-1] * len(graph.nodes)
    drawn = []
    for first in sorted(groups):
        members = groups[first]
        k = clustering.cluster_of[first]
        fate = f"→ cluster_{k}" if k >= 0 else "→ dropped (below min size)"
        for v in members:
            group_of[v] = len(drawn)
        drawn.append(Group(f"group_{first}", members, cluster_color(k) if k >= 0 else PENDING,
                           f"{ops_word(len(members))} {fate}", highlight=first == current))
    return View(title, drawn, group_of, list(code), list(clustering.reason), list(clustering.device))


def final_text(clustering: Clustering, names: list[str]) -> str:
    min_size = clustering.options.min_size
    dropped = [m for m in clustering.groups if clustering.cluster_of[m[0]] < 0]
    text = (f"final, after the minimum-size filter (min {min_size}): kept {len(clustering.clusters)} "
            f"cluster{'s' if len(clustering.clusters) != 1 else ''}")
    if dropped:
        text += "; dropped " + ", ".join(name_set(names, m) for m in dropped[:4])
        text += f" (+{len(dropped) - 4} more)" if len(dropped) > 4 else ""
    return text
