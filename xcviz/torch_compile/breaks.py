"""Graph breaks as Dynamo reports them: the reason it gives when it cuts a graph (the graph's
`compile_subgraph_reason`, the record `torch._dynamo.explain` lists) and the user's frame, `file:line`."""
from __future__ import annotations


def frame_text(frame) -> str:
    return f"{frame.filename}:{frame.lineno}"


def break_record(reason, after: int) -> dict:
    """One break: Dynamo's reason (its full text and its first line), the user's innermost frame and the stack."""
    stack = list(getattr(reason, "user_stack", None) or [])
    text = str(getattr(reason, "reason", "") or "")
    top = stack[-1] if stack else None
    return {
        "after_graph": after,
        "reason": text,
        "summary": text.strip().splitlines()[0] if text.strip() else "",
        "user_frame": frame_text(top) if top is not None else "",
        "function": getattr(top, "name", "") if top is not None else "",
        "line": (getattr(top, "line", "") or "").strip() if top is not None else "",
        "stack": [{"frame": frame_text(f), "function": f.name, "line": (f.line or "").strip()} for f in stack],
    }


def compile_info() -> tuple[str, str | None]:
    """(Dynamo's compile id `frame/attempt`, the guard that failed when this is a recompilation)."""
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
    except Exception:  # noqa: BLE001 - outside a Dynamo compile (a direct call): no id
        cid = None
    reason = None
    try:
        from torch._dynamo.utils import get_metrics_context

        reason = get_metrics_context().get_metrics().get("recompile_reason") if hasattr(
            get_metrics_context(), "get_metrics") else get_metrics_context()._metrics.get("recompile_reason")
    except Exception:  # noqa: BLE001 - torch moved it: the id still says it is a recompilation
        reason = None
    return (str(cid) if cid is not None else ""), reason
