"""Hardware profiles: the four numbers of the roofline model, named (cpu, gpu, h100, tpu) or read from YAML,
and the per-op-class numbers `xcviz calibrate` measures (classes: where present they replace the roofline)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources

import yaml

from ..errors import XcvizError
from .classes import Calibrated, parse_calibrated


DEFAULT_PROFILE = {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu"}


PROFILE_KEYS = ("peak_flops", "memory_bandwidth", "launch_overhead", "sync_overhead")
BACKENDS = ("cpu", "gpu", "tpu")


@dataclass(frozen=True)
class Hardware:
    name: str
    peak_flops: float
    memory_bandwidth: float
    launch_overhead: float
    sync_overhead: float
    description: str = ""
    backend: str = "cpu"     # the XLA backend whose fusion rules apply (cpu, gpu, tpu)
    source: str = ""         # where the numbers come from (a datasheet figure, or `xcviz calibrate` on ...)
    # per op class, measured (cost.classes); None: the roofline alone (a dict inside: left out of the hash)
    calibrated: Calibrated | None = field(default=None, hash=False)
    # the runtime the native times are of: the profile's `native:` (onnxruntime), numpy for a calibrated
    # profile without one (measured when native meant xcviz's NumPy reference), None for roofline figures
    native: str | None = None


def hardware_names() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("xcviz.hardware").iterdir() if p.name.endswith(".yaml"))


# the runtime a program runs on natively -> the suffix of the built-in profile measured against it (cpu_torch)
RUNTIME_PROFILE = {"torch": "torch", "tensorflow": "tf"}


def program_runtime(graph) -> str:
    """The runtime the program runs on today, what its estimate is against: torch (eager) for a torch program
    (.pt2, from_torch, a torch.compile graph: it carries its aten calls), tensorflow for a TensorFlow graph
    (GraphDef, SavedModel: its ops are tf.*), else onnxruntime (ONNX, xcviz's own YAML/JSON)."""
    if getattr(graph, "aten_calls", None) is not None:
        return "torch"
    nodes = getattr(graph, "nodes", ())
    # (each distinct op type once: a 10^6-node column holds a few hundred; 10^6 startswith took ~0.02-0.05 s)
    if len(nodes) and any(t.startswith("tf.") for t in set(nodes.column("op_type"))):
        return "tensorflow"
    return "onnxruntime"


def hardware_for(graph, spec: str | None = None, device: str = "cpu", native: str | None = None) -> Hardware:
    """THE hardware profile of an estimate (every command's: cluster, stats, validate, run, compile-report,
    census, ...): `spec` (--hardware) when given; else the device's default profile as measured against the
    program's native runtime (`native`, else program_runtime(graph)): cpu_torch for a torch program, cpu_tf
    for a TF graph where that profile ships, the device's default (cpu: onnxruntime) otherwise. The profile's
    `native` says which runtime the estimate is against."""
    if spec:
        return load_hardware(spec, device)
    base = load_hardware(None, device)
    rt = native or (program_runtime(graph) if graph is not None else None)
    if rt is None or base.native == rt or rt not in RUNTIME_PROFILE:
        return base
    name = f"{base.name}_{RUNTIME_PROFILE[rt]}"
    return load_hardware(name, device) if name in hardware_names() else base


def load_hardware(spec: str | None, device: str = "cpu") -> Hardware:
    """A named profile (cpu, gpu, h100, tpu) or a YAML file with the same keys."""
    spec = spec or DEFAULT_PROFILE.get(device, "cpu")
    if os.path.sep in spec or spec.endswith((".yaml", ".yml")):
        if not os.path.isfile(spec):
            raise XcvizError("hardware profile not found", where=spec, hint="copy one of " + ", ".join(hardware_names()))
        text, where = open(spec, encoding="utf-8").read(), spec
    else:
        if spec not in hardware_names():
            raise XcvizError(f"unknown hardware profile {spec!r}", hint="use one of " + ", ".join(hardware_names()) + " or a YAML file")
        text, where = resources.files("xcviz.hardware").joinpath(f"{spec}.yaml").read_text("utf-8"), spec
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise XcvizError(f"malformed hardware profile: {e}", where=where) from None
    if not isinstance(data, dict):
        raise XcvizError("hardware profile must be a mapping", where=where)
    values = {}
    for key in PROFILE_KEYS:
        v = data.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (key in ("peak_flops", "memory_bandwidth") and v <= 0):
            raise XcvizError(f"hardware profile needs a positive number for {key!r}", where=where,
                             hint="keys: " + ", ".join(PROFILE_KEYS))
        values[key] = float(v)
    backend = data.get("backend", "cpu")
    if backend not in BACKENDS:
        raise XcvizError(f"unknown backend {backend!r} in hardware profile", where=where, hint="one of " + ", ".join(BACKENDS))

    def fail(msg: str, hint: str | None) -> None:
        raise XcvizError(msg, where=where, hint=hint)

    calibrated = parse_calibrated(data, fail)
    native = data.get("native")
    native = str(native) if native else ("numpy" if calibrated is not None else None)
    return Hardware(str(data.get("name") or spec), description=str(data.get("description") or ""), backend=backend,
                    source=str(data.get("source") or ""), calibrated=calibrated, native=native, **values)
