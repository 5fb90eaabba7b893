"""Where the CLI's output goes: the console, JSON and renderables to stdout or a file, progress on stderr."""
from __future__ import annotations

import os
import sys
import time


def console(file=None):
    from rich.console import Console

    file = file or sys.stdout
    # Pipes get a fixed, generous width so tables stay readable and output is reproducible, unless COLUMNS
    # says otherwise (rich reads it, as on a terminal)
    width = None if file.isatty() or os.environ.get("COLUMNS", "").strip().isdigit() else 120
    return Console(file=file, highlight=False, soft_wrap=False, width=width)


def wants_json(json_flag: bool, output: str | None) -> bool:
    """A report's format: JSON with --json or for `-o FILE.json` (the format follows the suffix), else tables.
    --json into a file of another suffix is an error: report.txt must not hold JSON."""
    suffix = os.path.splitext(output)[1].lower() if output else ""
    if suffix == ".json":
        return True
    if json_flag and suffix:
        from ..errors import XcvizError
        from ..fileio import check_target

        check_target(output)  # a path that cannot be written is said first
        raise XcvizError(f"--json does not write a {suffix} file", where=output,
                         hint="name it .json, or drop --json for the tables as text")
    return json_flag


def emit_json(data, output: str | None) -> None:
    """`data` as json.dumps(indent=2) would write it, byte for byte (render/json_text.py: in C, where json.dumps
    indents in Python)."""
    from ..render.json_text import dumps_indented

    text = dumps_indented(data)
    if output:
        from ..fileio import write_atomic

        write_atomic(output, text + b"\n")
        console(sys.stderr).print(f"wrote {output}")
        return
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None and (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "") == "utf8":
        sys.stdout.flush()  # (anything written before comes first)
        buffer.write(text)  # (no decoded copy of a report that may be hundreds of MB)
        buffer.write(b"\n")
        buffer.flush()
    else:
        sys.stdout.write(text.decode("utf-8") + "\n")


def emit_renderable(renderable, output: str | None) -> None:
    from ..render.safe_text import sanitize
    from ..render.table_layout import Strip

    sanitize(renderable)  # names from a hostile file must not move the cursor or change colours
    renderable = Strip(renderable)  # no line ends in spaces (rich pads titles and wrapped text)
    if output:
        from rich.console import Console

        from ..fileio import check_target, write_atomic

        check_target(output)
        c = Console(record=True, width=120, file=open(os.devnull, "w"), color_system=None)
        c.print(renderable)
        write_atomic(output, c.export_text())
        console(sys.stderr).print(f"wrote {output}")
    else:
        console().print(renderable)


def emit_file(path: str, data: bytes | str) -> None:
    """Write `data` to `path` atomically and say so on stderr."""
    from ..fileio import write_atomic

    write_atomic(path, data)
    console(sys.stderr).print(f"wrote {path}", markup=False)


class LazyProgress:
    """A rich progress bar on stderr that appears only once work has taken more than `delay` seconds."""

    def __init__(self, label: str, delay: float = 0.5):
        self.label, self.delay, self.start, self.bar, self.task = label, delay, time.perf_counter(), None, None

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.bar is None and time.perf_counter() - self.start > self.delay and done < total:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                                TimeElapsedColumn(), console=console(sys.stderr), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(what, total=total)
        if self.bar is not None:
            self.bar.update(self.task, completed=done, description=what)
            if done >= total:
                self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
