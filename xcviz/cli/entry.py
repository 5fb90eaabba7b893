"""The entry points: main() runs a command with the one error path; run() is the `xcviz` console script."""
from __future__ import annotations

import os
import sys

from ..errors import BAD_INPUT, INTERNAL, XcvizError
from ..memory import keep_freed_memory
from .base import app

INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


def main(argv: list[str] | None = None) -> None:
    """Entry point: one line on stderr and exit 2 for bad input, 1 for internal errors (traceback with --debug)."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        # standalone_mode=False: typer returns the code of an exit instead of raising it, and turns
        # Ctrl-C into the code 130 (INTERRUPTED) without a word
        code = _app_for(args)(args=args, standalone_mode=False, prog_name="xcviz")
    except XcvizError as e:
        if debug:
            raise
        _fail(str(e), e.code)
    except KeyboardInterrupt:
        _fail("interrupted", INTERRUPTED)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the one place that turns surprises into a clean message
        aborts, usage_errors = _click_exceptions()
        if isinstance(e, aborts):
            _fail("aborted", INTERRUPTED)
        if isinstance(e, usage_errors):
            if debug:
                raise
            e.show()
            sys.exit(e.exit_code if e.exit_code else BAD_INPUT)
        if debug:
            raise
        _fail(f"internal error: {e.__class__.__name__}: {e} (this is a bug in xcviz; rerun with --debug and report it)", INTERNAL)
    else:
        # a command returns None; an int is an exit's code (0 after --help/--version)
        if code == INTERRUPTED:
            _fail("interrupted", INTERRUPTED)
        if isinstance(code, int) and code:
            sys.exit(code)


def _app_for(args: list[str]):
    """The app to run `args` with: when they start with a command's name, an app holding that command alone.

    typer builds a click command, flag by flag, for every registered command before it looks at the
    arguments, so every command paid for all the others, which cannot take part in this run. Anything else
    (no command, an option first, an unknown name and its did-you-mean, shell completion) gets the whole app."""
    import copy

    from typer.main import get_command_name

    if not args or os.environ.get("_XCVIZ_COMPLETE"):
        return app
    chosen = [info for info in app.registered_commands
              if (info.name or get_command_name(info.callback.__name__)) == args[0]]
    if len(chosen) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands = chosen
    return one


def run() -> None:
    """The `xcviz` command: main(), then exit without tearing the process's objects down one by one.

    After a big graph that teardown is long and buys nothing: the outputs are complete and flushed by
    then (files are written atomically), so nothing is lost. Errors with --debug still raise normally."""
    keep_freed_memory()   # (xcviz.memory: the command is short-lived, so the memory goes back at exit)
    from . import base

    base.OWN_PROCESS = True
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

    from ..render.safe_text import printable

    Console(file=sys.stderr, highlight=False, soft_wrap=True).print(Text("error: ", style="bold red") + Text(printable(message)))
    sys.exit(code)
