"""The command line: typer commands that parse flags into options, call the pipeline and print what renderers return.

`run` is the `xcviz` console script and `main(argv)` the same from Python; the commands live in the
modules imported below, each registering itself on `app`."""
from __future__ import annotations

from .base import app
from .entry import main, run

# the command modules, one import each: importing one registers its commands on `app`, in --help order
from . import analysis  # noqa: E402,F401
from . import drawing  # noqa: E402,F401
from . import running  # noqa: E402,F401
from . import printing  # noqa: E402,F401
from . import exporting  # noqa: E402,F401
from . import diff, check, sweep  # noqa: E402,F401  (issue 17: the everyday commands)
from . import census  # noqa: E402,F401  (issue 30: a hub of models at once)
from . import reporting  # noqa: E402,F401
from . import fx  # noqa: E402,F401
from . import compiling  # noqa: E402,F401  (issue 31: torch.compile)
from . import calibrating  # noqa: E402,F401

__all__ = ["app", "main", "run"]
