"""Run a TF1 graph with control flow v1 as TensorFlow's executor does: frames, iterations and dead tensors.

A value travels with a tag (frame, iteration). Enter moves it into a child frame's iteration 0 (a constant
Enter into every iteration of that frame), NextIteration into the next iteration, Exit back to the parent
frame. Switch sends its data to one output and a dead tensor to the other; a node with a dead input (or a dead
control input) does not run and its outputs are dead; Merge forwards its first live input, and is dead when all
the inputs it waits for in that iteration are (a loop's Merge waits for its Enter in iteration 0 and for its
NextIteration back edges after). A dead NextIteration ends its loop; a dead Exit is passed to the parent frame
only when its frame is done (every Enter of the frame instance has arrived and nothing else can run) and the
Exit never got a live value there, as TF's executor does for the frames of an untaken branch.

A unit is a lone node or a whole cluster (hybrid): a cluster runs as one step in the frame and iteration of its
inputs, so a cluster inside a loop body runs once per iteration, as TF runs an XLA cluster in a frame. The
runner of clusters and nodes is the caller's (runtime/execute.py): this module only schedules them."""
from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import XcvizError
from ..ir import Graph, format_ref, parse_ref
from ..ops.arrays import Unsupported

DEAD = type("Dead", (), {"__repr__": lambda self: "DEAD"})()
ROOT = (None, 0)  # the root frame's only iteration


def has_v1_flow(graph: Graph) -> bool:
    """Whether the graph holds TF1 control-flow nodes, which only this executor runs."""
    from ..ops import FRAMES, REGISTRY

    for op in {n.op for n in graph.nodes}:
        opdef = REGISTRY.ops.get(op)
        if opdef is not None and FRAMES in opdef.groups:
            return True
    return False


def _ref(r: str) -> str:
    return format_ref(*parse_ref(r))


class Schedule:
    """The static part, per graph and clustering: units, what each reads and who reads what it makes."""

    def __init__(self, graph: Graph, units: list, cluster_specs: dict):
        idx = graph.index
        self.graph = graph
        self.units = units                         # [('node', i) | ('cluster', k)]
        unit_of: dict[int, int] = {}
        for uid, (kind, u) in enumerate(units):
            for i in (cluster_specs[u].members if kind == "cluster" else (u,)):
                unit_of[i] = uid
        self.inputs: list[list] = []               # per unit: the refs it reads, None for an absent optional input
        self.n_back: list[int] = []                # a loop Merge: how many trailing inputs are back edges
        self.controls: list[set] = []              # per unit: the units it waits for through control edges
        self.op: list[str] = []
        for uid, (kind, u) in enumerate(units):
            if kind == "cluster":
                spec = cluster_specs[u]
                ins: list = [_ref(r) for r in spec.entries]
                ctl = {unit_of[idx[c]] for i in spec.members for c in graph.nodes[i].control_inputs
                       if c in idx and unit_of[idx[c]] != uid}
                self.op.append("")
                back: list = []
            else:
                node = graph.nodes[u]
                ins = [_ref(r) if r else None for r in node.inputs]
                back = [_ref(b) for b in node.attrs.get("_back_edges", ())] if node.op == "tf.Merge" else []
                ctl = {unit_of[idx[c]] for c in node.control_inputs if c in idx} - {uid}
                self.op.append(node.op)
            self.inputs.append(ins + back)
            self.n_back.append(len(back))
            self.controls.append(ctl if self.op[-1] != "tf.Merge" else set())
        self.consumers: dict[str, list] = {}       # ref -> [(unit, slot)]
        for uid, ins in enumerate(self.inputs):
            for slot, r in enumerate(ins):
                if r is not None:
                    self.consumers.setdefault(r, []).append((uid, slot))
        self.control_out: list[list] = [[] for _ in units]
        for uid, ctl in enumerate(self.controls):
            for src in sorted(ctl):
                self.control_out[src].append(uid)
        self.needed = [sum(r is not None for r in ins) + len(ctl) for ins, ctl in zip(self.inputs, self.controls)]
        self.enters: dict[str, int] = {}           # frame name -> how many Enter units feed it
        for kind, u in units:
            if kind == "node" and graph.nodes[u].op == "tf.Enter":
                name = graph.nodes[u].attrs.get("frame_name", "")
                self.enters[name] = self.enters.get(name, 0) + 1
        self.made: list[list] = []                 # per unit: the refs it makes that something reads
        for kind, u in units:
            if kind == "cluster":
                refs = [_ref(r) for r in cluster_specs[u].exits]
            else:
                node = graph.nodes[u]
                n = max(len(node.outputs), 2, int(node.attrs.get("num_outs") or 0))
                refs = [format_ref(node.name, k) for k in range(n)]
            self.made.append([r for r in refs if r in self.consumers])
        self.sources = [uid for uid in range(len(units)) if self.needed[uid] == 0]
        self.fed = sorted(r for r in self.consumers if r in {v.name for v in graph.inputs})


class _Frame:
    __slots__ = ("iters", "consts", "arrived", "exits_live", "exits_dead", "depth")

    def __init__(self, depth: int):
        self.iters: set = set()
        self.consts: list = []      # (unit, slot, value) of constant Enters, delivered to every iteration
        self.arrived = 0            # Enter units that delivered into this frame instance
        self.exits_live: set = set()
        self.exits_dead: set = set()
        self.depth = depth


def run_frames(sched: Schedule, feeds: dict, run_unit, max_steps: int = 50_000_000, env: dict | None = None,
               keep: frozenset | None = None) -> dict:
    """Every live value of one run, by ref (a value made in a loop: its last iteration's), into `env` when given
    (what was computed stays there when a node fails); with `keep`, only those refs (the graph's outputs: every
    other value lives only while a unit waits for it). `run_unit(uid, inputs) -> {ref: value}` runs a node or a
    cluster on the values of its input refs."""
    g = sched.graph
    env = {} if env is None else env

    def store(r: str, v) -> None:
        if keep is None or r in keep:
            env[r] = v
    pending: dict = {}
    merges: dict = {}
    frames: dict = {}
    ready: deque = deque()

    def frame(fk) -> _Frame:
        f = frames.get(fk)
        if f is None:
            f = frames[fk] = _Frame(0 if fk is None else frames_depth(fk))
        return f

    def frames_depth(fk) -> int:
        d = 0
        while fk is not None:
            d, fk = d + 1, fk[0][0]
        return d

    def start_iter(fk, it: int) -> None:
        f = frame(fk)
        if it not in f.iters:
            f.iters.add(it)
            for uid, slot, v in f.consts:
                deliver(uid, slot, (fk, it), v)

    def deliver(uid: int, slot: int, tag, v) -> None:
        if sched.op[uid] == "tf.Merge" and slot >= 0:
            key = (uid, tag)
            st = merges.get(key)
            if st is None:
                st = merges[key] = [False, 0]
            if st[0]:
                return
            if v is not DEAD:
                st[0] = True
                ready.append((uid, tag, ("merge", v, slot), False))
                return
            st[1] += 1
            nb, n = sched.n_back[uid], len(sched.inputs[uid])
            expect = (n - nb if tag[1] == 0 else nb) if nb else n
            if st[1] >= expect:
                st[0] = True
                ready.append((uid, tag, None, True))
            return
        key = (uid, tag)
        ent = pending.get(key)
        if ent is None:
            ent = pending[key] = [[None] * len(sched.inputs[uid]), 0, False]
        if slot >= 0:
            ent[0][slot] = v
        ent[1] += 1
        if v is DEAD:
            ent[2] = True
        if ent[1] == sched.needed[uid]:
            del pending[key]
            ready.append((uid, tag, ent[0], ent[2]))

    def send(uid: int, tag, outs: dict, dead: bool) -> None:
        for r, v in outs.items():
            if v is not DEAD:
                store(r, v)
            for cu, slot in sched.consumers.get(r, ()):
                deliver(cu, slot, tag, v)
        for cu in sched.control_out[uid]:
            deliver(cu, -1, tag, DEAD if dead else None)

    def outs_of(uid: int, value) -> dict:
        kind, u = sched.units[uid]
        node = g.nodes[u]
        return {format_ref(node.name, k): value for k in range(max(len(node.outputs), 1))}

    for r in sched.fed:
        store(r, feeds[r])
        for cu, slot in sched.consumers.get(r, ()):
            deliver(cu, slot, ROOT, feeds[r])
    for uid in sched.sources:
        ready.append((uid, ROOT, [], False))
    steps = 0
    while True:
        while ready:
            steps += 1
            if steps > max_steps:
                raise Unsupported(f"the run took over {max_steps} steps (a loop that does not end?)")
            uid, tag, vals, dead = ready.popleft()
            op = sched.op[uid]
            kind, u = sched.units[uid]
            if op == "tf.Merge":
                name = g.nodes[u].name
                if dead:
                    send(uid, tag, {name: DEAD, f"{name}:1": DEAD}, True)
                else:
                    _, v, slot = vals
                    store(name, v)
                    send(uid, tag, {name: v, f"{name}:1": np.int32(slot)}, False)
                continue
            if op == "tf.Enter":
                node = g.nodes[u]
                child = (tag, node.attrs.get("frame_name", ""))
                f = frame(child)
                f.arrived += 1
                start_iter(child, 0)
                v = DEAD if dead else vals[0]
                if node.attrs.get("is_constant"):
                    if not dead:
                        store(node.name, v)
                    for cu, slot in sched.consumers.get(node.name, ()):
                        f.consts.append((cu, slot, v))
                        for it in sorted(f.iters):
                            deliver(cu, slot, (child, it), v)
                    for cu in sched.control_out[uid]:
                        f.consts.append((cu, -1, DEAD if dead else None))
                        for it in sorted(f.iters):
                            deliver(cu, -1, (child, it), DEAD if dead else None)
                else:
                    send(uid, (child, 0), {node.name: v}, dead)
                continue
            if op == "tf.Exit":
                fk = tag[0]
                if fk is None:
                    raise Unsupported(f"Exit {g.nodes[u].name!r} outside any frame")
                if dead:
                    frame(fk).exits_dead.add(uid)
                else:
                    frame(fk).exits_live.add(uid)
                    store(g.nodes[u].name, vals[0])
                    send(uid, fk[0], {g.nodes[u].name: vals[0]}, False)
                continue
            if op == "tf.NextIteration":
                if not dead:
                    fk, it = tag
                    start_iter(fk, it + 1)
                    send(uid, (fk, it + 1), {g.nodes[u].name: vals[0]}, False)
                continue
            if dead:
                send(uid, tag, {r: DEAD for r in sched.made[uid]}, True)
                continue
            if op == "tf.Switch":
                data, pred = vals
                name = g.nodes[u].name
                taken = bool(np.asarray(pred).reshape(()))
                send(uid, tag, {name: DEAD if taken else data, f"{name}:1": data if taken else DEAD}, False)
                continue
            if op == "tf._SwitchN":
                data, index = vals
                node = g.nodes[u]
                n = int(node.attrs.get("num_outs") or len(node.outputs))
                k = int(np.asarray(index).reshape(()))
                k = k if 0 <= k < n else n - 1
                send(uid, tag, {format_ref(node.name, j): data if j == k else DEAD for j in range(n)}, False)
                continue
            if op == "tf.LoopCond":
                outs = outs_of(uid, vals[0])
            else:
                outs = run_unit(uid, vals)
            send(uid, tag, outs, False)   # (send stores them)
        if not _resolve_dead_exits(sched, frames, send):
            break
    missing = [r for r in g.outputs if r not in env]
    if missing:
        stalled = _stalled(sched, pending)
        raise XcvizError(f"output {missing[0]!r} got no live value (its branch or loop never produced one"
                         + (f"; {stalled}" if stalled else "") + ")",
                         hint="TensorFlow's own run fails the same way when it fetches a dead tensor")
    return env


def _stalled(sched: Schedule, pending: dict) -> str:
    """The first node left waiting, and for what: what a stalled run says."""
    for (uid, tag), ent in pending.items():
        kind, u = sched.units[uid]
        name = sched.graph.nodes[u].name if kind == "node" else f"cluster {u}"
        absent = [r for r, v in zip(sched.inputs[uid], ent[0]) if r is not None and v is None]
        return f"{len(pending)} node(s) still wait, e.g. {name!r} for {absent[:2] or 'a control input'}"
    return ""


def _resolve_dead_exits(sched: Schedule, frames: dict, send) -> bool:
    """A done frame instance's Exits that never got a live value go dead to the parent frame (deepest first)."""
    g = sched.graph
    done = []
    for fk, f in frames.items():
        if fk is None:
            continue
        waiting = f.exits_dead - f.exits_live
        if waiting and f.arrived >= sched.enters.get(fk[1], 0):
            done.append((-f.depth, repr(fk), fk, waiting))
    if not done:
        return False
    _, _, fk, waiting = min(done, key=lambda t: (t[0], t[1]))
    f = frames[fk]
    for uid in sorted(waiting):
        f.exits_live.add(uid)  # resolved: never again
        send(uid, fk[0], {g.nodes[sched.units[uid][1]].name: DEAD}, True)
    return True
