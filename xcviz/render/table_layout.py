"""Table layout for any terminal width: columns never narrower than their longest word, one record per row when
even that does not fit (or below 80 columns, when the table would wrap), titles on one line, no trailing spaces."""
from __future__ import annotations

import copy

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

NARROW = 80        # below this width a table of more than RECORD_COLUMNS columns becomes records
RECORD_COLUMNS = 3


def _plain(cell) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _words(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _lines(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def column_widths(table: Table, width: int) -> list[int] | None:
    """Content widths that keep every word whole within `width`, or None when the words alone do not fit.
    Each column gets at least its longest word; what is left is shared in proportion to what each still lacks."""
    cols = table.columns
    if not cols:
        return None
    cells = [[_plain(c.header)] + [_plain(x) for x in c._cells] for c in cols]
    # a heading stays on one line; a cell may wrap between its words
    low = [max([_lines(texts[0])] + [_words(t) for t in texts[1:]]) for texts in cells]
    high = [max(max(_lines(t) for t in texts), lo) for texts, lo in zip(cells, low)]
    for i, c in enumerate(cols):
        if c.no_wrap:
            low[i] = high[i]
    pad = table.padding[1] + table.padding[3]
    extra = (2 if table.box and table.show_edge else 0) + (len(cols) - 1 if table.box else 0) + pad * len(cols)
    room = width - extra
    if sum(low) > room:
        return None
    if sum(high) <= room:
        return high
    spare, lack = room - sum(low), [h - lo for h, lo in zip(high, low)]
    total = sum(lack)
    widths = [lo + spare * k // total for lo, k in zip(low, lack)]
    for i in sorted(range(len(cols)), key=lambda i: -lack[i])[: room - sum(widths)]:  # the rounding's leftovers
        widths[i] += 1
    return widths


def records(table: Table, width: int) -> Group:
    """One record per row: the first cell as its heading, then `column  value` lines (long words ellipsized)."""
    cols = table.columns
    keys = [_plain(c.header) for c in cols[1:]]
    key_width = max((cell_len(k) for k in keys), default=0)
    parts: list = []
    for r in range(table.row_count):
        head = cols[0]._cells[r]
        parts.append(head if isinstance(head, Text) else Text(str(head)))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=1)
        grid.add_column(width=key_width, style="dim", no_wrap=True)
        grid.add_column(width=max(1, width - key_width - 3), overflow="ellipsis")
        for key, c in zip(keys, cols[1:]):
            value = c._cells[r]
            value = value.copy() if isinstance(value, Text) else Text(str(value))
            if not value.plain.strip():
                continue
            value.overflow = "ellipsis"
            grid.add_row("", key, value)
        parts.append(grid)
    return Group(*parts)


class Fit:
    """Wraps a Table; decides its layout at the width it is printed at."""

    def __init__(self, table: Table):
        self.renderable = table  # (the attribute name safe_text.sanitize walks)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        t = self.renderable
        widths = column_widths(t, width)
        if widths is not None and width < NARROW and len(t.columns) > RECORD_COLUMNS and column_widths(t, 10**6) != widths:
            widths = None  # a narrow screen: records read better than a wide table wrapped in every cell
        parts: list = []
        if t.title is not None:
            title = t.title.copy() if isinstance(t.title, Text) else Text(str(t.title), style="bold")
            title.no_wrap, title.overflow = True, "ellipsis"
            parts.append(title)
        if widths is None:
            parts.append(records(t, width))
        else:
            body = copy.copy(t)
            body.title = body.caption = None
            body.columns = [copy.copy(c) for c in t.columns]
            for c, w in zip(body.columns, widths):
                c.width, c.min_width, c.max_width = w, None, None
            parts.append(body)
        if t.caption is not None:
            parts.append(t.caption if isinstance(t.caption, Text) else Text(str(t.caption), style="dim"))
        yield from _stripped(console, options, Group(*parts))


def _stripped(console: Console, options: ConsoleOptions, renderable) -> RenderResult:
    for line in console.render_lines(renderable, options, pad=False):
        yield from strip_line(line)
        yield Segment.line()


class Strip:
    """Any renderable, its lines without trailing spaces (rich's word wrap leaves the space it broke at)."""

    def __init__(self, renderable):
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _stripped(console, options, self.renderable)


def strip_line(line: list[Segment]) -> list[Segment]:
    """The line without trailing spaces (a styled background is kept)."""
    out = list(line)
    while out:
        seg = out[-1]
        if seg.control or (seg.style is not None and seg.style.bgcolor is not None):
            break
        text = seg.text.rstrip(" ")
        if text:
            out[-1] = Segment(text, seg.style, seg.control)
            break
        out.pop()
    return out


def fit(table: Table) -> Fit:
    return Fit(table)


class Phrases:
    """A line of phrases joined by ' · ' that wraps only between phrases ('145.0 KiB' stays on one line)."""

    def __init__(self, text: Text, sep: str = " · "):
        self.renderable = text
        self.sep = sep

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, min(options.max_width, max(1, self.renderable.cell_len)))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        pieces = list(self.renderable.split(self.sep))
        lines, line = [], Text()
        end = self.sep.rstrip()
        for k, piece in enumerate(pieces):
            # a line that goes on ends with the separator: count it, or the line wraps once more
            tail = len(end) if k < len(pieces) - 1 else 0
            if line.cell_len and line.cell_len + len(self.sep) + piece.cell_len + tail > width:
                line.append(end)  # the separator ends the line: the next phrase continues it
                lines.append(line)
                line = Text()
            if line.cell_len:
                line.append(self.sep)
            line.append_text(piece)
        yield from _stripped(console, options, Group(*lines, line))  # a phrase wider than the screen wraps


def phrases(text: Text) -> Phrases:
    return Phrases(text)
