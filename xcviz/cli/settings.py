"""KEY=VALUE clustering settings (diff --a/--b, sweep --set and --config files) applied over the shared flags."""
from __future__ import annotations

import os
from typing import Iterable, Mapping

from ..errors import XcvizError, did_you_mean
from ..pipeline import AnalysisOptions, read_supported_ops

# the clustering options a setting may change (loading options such as --dim apply to both sides alike)
KEYS = ("strategy", "device", "min_cluster_size", "max_cluster_size", "allow", "deny", "supported_ops", "hardware")


def parse_settings(items: Iterable[str] | None, flag: str) -> dict[str, object]:
    """['strategy=mark,min_cluster_size=1', 'deny=relu,add'] -> {strategy: 'mark', ...}. A comma-separated
    word without '=' continues the previous key's value, so `allow=a,b` lists two ops."""
    pairs: list[list[str]] = []
    for item in items or []:
        for word in item.split(","):
            word = word.strip()
            if not word:
                continue
            key, sep, value = word.partition("=")
            if sep:
                pairs.append([key.strip(), value.strip()])
            elif pairs:
                pairs[-1][1] += "," + word
            else:
                raise XcvizError(f"{flag}: {word!r} is not KEY=VALUE", hint=f"write {flag} strategy=greedy,min_cluster_size=1")
    return convert({k: v for k, v in pairs}, flag)


def convert(raw: Mapping[str, object], where: str) -> dict[str, object]:
    """Raw values (strings from the command line, or YAML's values) -> AnalysisOptions field values."""
    out: dict[str, object] = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name not in KEYS:
            hint = did_you_mean(name, KEYS)
            raise XcvizError(f"{where}: unknown setting {key!r}", hint=(hint + "; " if hint else "") + "settings: " + ", ".join(KEYS))
        if name in ("min_cluster_size", "max_cluster_size"):
            out[name] = _size(value, name, where)
        elif name in ("allow", "deny"):
            words = value if isinstance(value, list) else str(value).split(",")
            out[name] = frozenset(str(w).strip() for w in words if str(w).strip())
        elif name == "supported_ops":
            out[name] = read_supported_ops(str(value))
        else:
            out[name] = None if value is None or str(value).lower() == "none" else str(value)
    return out


def _size(value, name: str, where: str) -> int | None:
    if value is None or str(value).lower() in ("none", "default"):
        return None
    try:
        return int(str(value))
    except ValueError:
        raise XcvizError(f"{where}: {name}={value!r} is not a whole number", hint=f"write {name}=4") from None


def apply(base: AnalysisOptions, settings: Mapping[str, object]) -> AnalysisOptions:
    """The shared flags' options with the settings on top (validated as AnalysisOptions are)."""
    return base.replace(**settings) if settings else base


def describe(settings: Mapping[str, object]) -> str:
    """A short label: 'strategy=mark min_cluster_size=1' (or 'the flags' when there is nothing on top)."""
    if not settings:
        return "as the flags say"
    return " ".join(f"{k}={','.join(sorted(v)) if isinstance(v, frozenset) else v}" for k, v in settings.items())


def read_config(path: str) -> dict[str, object]:
    """A --config file: a YAML mapping of settings (strategy: greedy, deny: [relu], ...)."""
    import yaml

    from ..fileio import protect

    if not os.path.isfile(path):
        raise XcvizError("config file not found", where=path)
    protect(path)
    try:
        data = yaml.safe_load(open(path, encoding="utf-8", errors="replace").read())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise XcvizError(f"malformed YAML: {getattr(e, 'problem', None) or str(e).splitlines()[0]}",
                         where=f"{path}:{mark.line + 1}" if mark else path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise XcvizError("a config file is a mapping of settings", where=path, hint="write e.g. `strategy: greedy`")
    return convert(data, path)
