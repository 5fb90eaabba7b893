"""The command line: parse, call the library, render. The only module that prints or writes files."""
from __future__ import annotations

import os
import sys

import typer

from .cli_common import Debug, GraphArg, Json, Output, analyse, analysis_command, app, emit_json, emit_renderable
from .errors import BAD_INPUT, INTERNAL, XcvizError


@analysis_command
def cluster(graph: GraphArg, json: Json = False, output: Output = None,
            limit: int = typer.Option(200, help="rows per table (all rows with --json)"), *, analysis: dict) -> None:
    """Clusters, fallback nodes with their reasons, refused merges, and a one-line summary."""
    g, c, s = analyse(graph, **analysis)
    if json:
        from .report import cluster_report

        emit_json(cluster_report(g, c, s), output)
    else:
        from .render.tables import cluster_view

        emit_renderable(cluster_view(g, c, s, limit=limit), output)


@analysis_command
def stats(graph: GraphArg, json: Json = False, output: Output = None, *, analysis: dict) -> None:
    """Coverage, boundary bytes, kernel launches before/after, estimated speedup."""
    g, c, s = analyse(graph, **analysis)
    if json:
        from .report import stats_report

        emit_json(stats_report(g, c, s), output)
    else:
        from .render.tables import stats_table

        emit_renderable(stats_table(g, c, s), output)


@analysis_command
def explain(graph: GraphArg, node: str = typer.Argument(..., help="node name", show_default=False),
            json: Json = False, output: Output = None, *, analysis: dict) -> None:
    """The story of one node: candidate or not, every merge tried, and where it ended up."""
    from .clustering.explain import story
    from .errors import did_you_mean

    g, c, s = analyse(graph, **analysis)
    i = g.index.get(node)
    if i is None:
        raise XcvizError(f"no node named {node!r}", where=graph, hint=did_you_mean(node, g.index) or "see `xcviz cluster`")
    st = story(g, c, i)
    if json:
        st = dict(st, schema_version=1, steps=[{"phase": x.phase, "merged": x.merged, "producer_side": x.producer_side,
                                                "consumer_side": x.consumer_side, "reason": x.reason, "path": x.path}
                                               for x in st["steps"]])
        emit_json(st, output)
    else:
        from .render.tables import explain_view

        emit_renderable(explain_view(st), output)


@app.command()
def ops(json: Json = False, output: Output = None, debug: Debug = False) -> None:
    """The op registry: canonical names, aliases, and whether XLA compiles each op per device."""
    from .ops import DEVICES, REGISTRY

    if json:
        emit_json({"schema_version": 1, "ops": [
            {"name": o.name, "aliases": list(o.aliases), "groups": sorted(o.groups),
             "compilable": {d: o.compilable_on(d) for d in DEVICES}, "reason": o.reason, "attrs": _jsonable(o.attrs),
             "doc": o.doc} for o in REGISTRY]}, output)
    else:
        from .render.tables import ops_table

        emit_renderable(ops_table(REGISTRY), output)


def _jsonable(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if v is None or isinstance(v, (int, float, str, bool, list))}


def main(argv: list[str] | None = None) -> None:
    """Entry point: one line on stderr and exit 2 for bad input, 1 for internal errors (traceback with --debug)."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        app(args=args, standalone_mode=False, prog_name="xcviz")
    except XcvizError as e:
        if debug:
            raise
        _fail(str(e), e.code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the one place that turns surprises into a clean message
        aborts, usage_errors = _click_exceptions()
        if isinstance(e, aborts):
            _fail("aborted", 130)
        if isinstance(e, usage_errors):
            if debug:
                raise
            e.show()
            sys.exit(e.exit_code if e.exit_code else BAD_INPUT)
        if debug:
            raise
        _fail(f"internal error: {e.__class__.__name__}: {e} (this is a bug in xcviz; rerun with --debug and report it)", INTERNAL)


def run() -> None:
    """The `xcviz` command: main(), then exit without tearing the process's objects down one by one.

    After a 10^6-node graph that teardown took over a second; the outputs are complete and flushed by
    then (files are written atomically), so nothing is lost. Errors with --debug still raise normally."""
    _keep_freed_memory()
    from . import cli_common

    cli_common.OWN_PROCESS = True
    code: int | str | None = 0
    try:
        main()
    except SystemExit as e:
        code = e.code
    if isinstance(code, str):  # sys.exit("message"): print it as Python would
        print(code, file=sys.stderr)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # e.g. stdout closed early by `| head`
        pass
    os._exit(code or 0)


def _keep_freed_memory() -> None:
    """Ask glibc to keep freed memory instead of returning it to the OS at once: the next allocations
    would fault it back in page by page (0.3-0.4 s of system time for a 10^6-node graph). The command is
    short-lived, so the memory goes back at exit. Nothing happens where there is no glibc."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 32 << 20)   # M_MMAP_THRESHOLD: arrays under 32 MiB come from the heap (glibc's cap)
        libc.mallopt(-1, 1 << 30)    # M_TRIM_THRESHOLD: trim the heap only past 1 GiB of free space
        libc.mallopt(-2, 256 << 20)  # M_TOP_PAD: grow the heap 256 MiB at a time
    except (OSError, AttributeError):
        pass


def _click_exceptions() -> tuple[tuple, tuple]:
    """(Abort, ClickException) classes of click and of the copy typer may vendor (typer._click)."""
    import importlib

    aborts, errors = [], []
    for name in ("click.exceptions", "typer._click.exceptions"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        aborts += [getattr(mod, "Abort")] if hasattr(mod, "Abort") else []
        errors += [getattr(mod, "ClickException")] if hasattr(mod, "ClickException") else []
    return tuple(aborts), tuple(errors)


def _fail(message: str, code: int) -> None:
    from rich.console import Console
    from rich.text import Text

    from .render.safe_text import printable

    Console(file=sys.stderr, highlight=False, soft_wrap=True).print(Text("error: ", style="bold red") + Text(printable(message)))
    sys.exit(code)
from . import cli_render  # noqa: E402,F401
from . import cli_exec  # noqa: E402,F401
from . import cli_print  # noqa: E402,F401
