"""Rerun the commands behind the numbers in README.md and docs/*.md and compare what they print today.

Two kinds of figure are checked:
- a fenced block whose first line is `$ xcviz ...` (a command and what it printed): the command runs again
  from the repository's root, at the block's width, and every number of the block must come back. Figures
  the cost model computes (estimates, bytes, counts: `cluster`, `stats`, `compile-report`...) must be equal;
  in a block of a timing command (`validate`, `run`) every number is a timing, or sits in a row of timings,
  and must be within a tolerance band (--band, default 4x: the machine is shared). A `...` line stands for
  lines left out. An HTML comment on the line before the fence overrides the kind:
  `<!-- numbers: exact -->`, `<!-- numbers: timing -->`, or `<!-- numbers: example -->` (not rerun: the
  text around it must then say "example run" with the command's date);
- a ```python block of the pages in PYTHON_PAGES: it runs (as tests/docs/test_python_blocks runs the
  README's) and each `# ...` comment line right after a `print(` line must be a line it printed.

`python tools/docs_numbers.py` reports the figures that moved and exits 1 if any did; `--write` puts the
fresh figures into the exact blocks and the python comments (timing blocks are left: rerun them on a quiet
machine and paste by hand); `--only exact` skips the timing blocks; PAGE... limits it to some pages.
`--prose` lists the paragraphs with a speedup figure (1.87×) that name no benchmark page (benchmarks/...,
samples/...) and no dated run: figures nothing reruns.
tests/docs/test_docs_numbers.py runs the exact checks, so a stale deterministic figure fails CI."""
from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON_PAGES = ("docs/torch-compile.md",)   # (README, python-api and pytorch: tests/docs/test_python_blocks)
TIMING_COMMANDS = ("validate", "run", "calibrate")
FENCE = re.compile(r"(?:^<!-- numbers: (\w+) -->\n)?^```([\w-]*)\n(.*?)^```", re.M | re.S)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?:e[-+]?\d+)?(?![\w])")
BOX = re.compile(r"[─━┏┳┓┡╇┩└┴┘│┃┌┬┐├┼┤╭╮╰╯]")


def pages(only: list[str] | None = None) -> list[str]:
    found = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))]
    return [p for p in found if not only or p in only]


def blocks(page: str) -> list[dict]:
    """The command blocks of a page: {page, start, end (of the body), kind, command, body, width}."""
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    out = []
    for m in FENCE.finditer(text):
        marker, lang, body = m.group(1), m.group(2), m.group(3)
        first = body.split("\n", 1)[0]
        if lang == "python" and page in PYTHON_PAGES:
            out.append({"page": page, "start": m.start(3), "end": m.end(3), "kind": "python", "body": body})
            continue
        if not first.startswith("$ xcviz "):
            continue
        cmd = first[2:].split("#")[0].strip()
        kind = marker or ("timing" if cmd.split()[1] in TIMING_COMMANDS else "exact")
        width = max(len(line) for line in body.splitlines())
        out.append({"page": page, "start": m.start(3), "end": m.end(3), "kind": kind, "command": cmd,
                    "body": body, "width": max(width, 80), "before": text[max(0, m.start() - 500):m.start()]})
    return out


def run_command(cmd: str, width: int) -> str:
    env = {**os.environ, "COLUMNS": str(width), "PYTHONPATH": ROOT, "NO_COLOR": "1", "TERM": "dumb"}
    args = [sys.executable, "-m", "xcviz", *cmd.split()[1:]]
    p = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    return p.stdout if p.stdout.strip() else p.stderr


def _flat(text: str) -> str:
    return " ".join(BOX.sub(" ", text).split())


def _segments(body: str) -> list[str]:
    """The block's output lines (after the command), cut at each `...` line, each flattened."""
    segs, cur = [], []
    for line in body.splitlines()[1:]:
        if line.lstrip().startswith("..."):
            segs.append(cur)
            cur = []
        else:
            cur.append(line)
    segs.append(cur)
    return [_flat("\n".join(s)) for s in segs if any(x.strip() for x in s)]


def _pattern(seg: str) -> re.Pattern:
    """The segment as a regex: its numbers captured, its spaces any spaces, everything else literal."""
    parts, last = [], 0
    for m in NUMBER.finditer(seg):
        parts.append(re.escape(seg[last:m.start()]))
        parts.append(r"(\d+(?:\.\d+)*(?:e[-+]?\d+)?)")
        last = m.end()
    parts.append(re.escape(seg[last:]))
    return re.compile("".join(parts).replace(r"\ ", r"\s*"))


def _close(doc: str, got: str, band: float) -> bool:
    try:
        a, b = float(doc), float(got)
    except ValueError:
        return doc == got
    if a == b:
        return True
    if a <= 0 or b <= 0:
        return False
    return max(a / b, b / a) <= band


def check_block(block: dict, band: float) -> tuple[list[str], dict]:
    """(the differences in words, {doc number position in the page: fresh number} for --write)."""
    out = _flat(run_command(block["command"], block["width"]))
    problems, fixes = [], {}
    body_at = block["start"]
    lines = block["body"].splitlines(keepends=True)
    offset = body_at + len(lines[0])
    raw = "".join(lines[1:])
    for seg in _segments(block["body"]):
        m = _pattern(seg).search(out)
        if m is None:
            problems.append(f"{block['page']}: `{block['command']}` no longer prints: {seg[:160]!r}")
            continue
        docs = [x.group(0) for x in NUMBER.finditer(seg)]
        for k, (d, g) in enumerate(zip(docs, m.groups())):
            ok = d == g if block["kind"] == "exact" else _close(d, g, band)
            if not ok:
                problems.append(f"{block['page']}: `{block['command']}` says {d} where it prints {g} "
                                f"(…{seg[max(0, _nth(seg, k) - 40):_nth(seg, k) + 10]}…)")
        if block["kind"] == "exact":
            fixes.update(_positions(raw, offset, seg, list(m.groups())))
    return problems, fixes


def _nth(seg: str, k: int) -> int:
    return [x.start() for x in NUMBER.finditer(seg)][k]


def _positions(raw: str, offset: int, seg: str, fresh: list[str]) -> dict:
    """{(start, end) in the page: fresh number} for the numbers of `seg` as they sit in the raw block."""
    flat_pos: list = []
    nums = list(NUMBER.finditer(BOX.sub(" ", raw)))   # (BOX keeps every position: one character for one)
    words = [x.group(0) for x in NUMBER.finditer(seg)]
    vals = [x.group(0) for x in nums]
    for i in range(len(vals) - len(words) + 1):   # the run of the block's numbers that is the segment's
        if vals[i:i + len(words)] == words:
            flat_pos = nums[i:i + len(words)]
            break
    return {(offset + x.start(), offset + x.end()): f for x, f in zip(flat_pos, fresh) if x.group(0) != f}


def check_python(block: dict) -> tuple[list[str], dict]:
    """Run a python block; each `# ...` comment after a print must be a printed line."""
    body = block["body"]
    with tempfile.TemporaryDirectory() as tmp:
        for entry in os.listdir(ROOT):
            if not entry.startswith("."):
                os.symlink(os.path.join(ROOT, entry), os.path.join(tmp, entry))
        # `from demo import make   # tests/data/x/demo.py`: the module named by the comment is importable
        extra = [os.path.join(ROOT, os.path.dirname(f)) for f in re.findall(r"^from \w+ import .*#\s*(\S+\.py)", body, re.M)]
        p = subprocess.run([sys.executable, "-c", body], cwd=tmp, capture_output=True, text=True, timeout=900,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, *extra])})
    if p.returncode != 0:
        return [f"{block['page']}: a python block failed: {(p.stderr.strip().splitlines() or [''])[-1][:200]}"], {}
    printed = [line.rstrip() for line in p.stdout.splitlines()]
    problems, fixes = [], {}
    lines = body.splitlines(keepends=True)
    at, k = block["start"], 0
    expected, after_print = [], False
    for line in lines:
        if line.lstrip().startswith("# ") and after_print:   # (the comments right after a print, no blank line)
            expected.append((at + line.index("# ") + 2, at + len(line.rstrip("\n")), line.strip()[2:]))
        else:
            after_print = "print(" in line
        at += len(line)
    for start, end, want in expected:
        shape = NUMBER.sub("#", want)
        match = next((p_ for p_ in printed[k:] if NUMBER.sub("#", p_) == shape), None)
        if match is None:
            problems.append(f"{block['page']}: the python block no longer prints {want!r}")
            continue
        k = printed.index(match, k) + 1
        if match != want:
            problems.append(f"{block['page']}: the python block says {want!r} where it prints {match!r}")
            fixes[(start, end)] = match
    return problems, fixes


FIGURE = re.compile(r"(?<![\w.‹⟨×])\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?×(?![\d\w])")   # (not a shape: 64×64)
SOURCED = re.compile(r"example run|benchmarks/|samples/|\d{4}-\d{2}-\d{2}", re.I)


def unsourced(page: str) -> list[str]:
    """Paragraphs outside the fenced blocks with a speedup figure (1.87×) that name neither a benchmark page
    (benchmarks/..., samples/...) nor a dated example run: figures no command reruns."""
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    out = []
    paras = re.split(r"\n\s*\n", prose)
    for k, para in enumerate(paras):   # (a table is sourced by the paragraph that introduces it)
        claim = re.sub(r"`[^`\n]*`", "", para)   # (a figure in code is a format shown, not a claim)
        if FIGURE.search(claim) and not SOURCED.search(para) and not (k and SOURCED.search(paras[k - 1])):
            out.append(f"{page}: unsourced figure {FIGURE.search(claim).group(0)} in: {' '.join(para.split())[:120]}")
    return out


def write(page: str, fixes: dict) -> None:
    path = os.path.join(ROOT, page)
    text = open(path, encoding="utf-8").read()
    for (s, e), new in sorted(fixes.items(), reverse=True):
        text = text[:s] + new + text[e:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", help="README.md, docs/x.md ... [all]")
    ap.add_argument("--band", type=float, default=4.0, help="tolerance factor for timings [4]")
    ap.add_argument("--only", choices=("exact", "timing", "python"), help="check one kind of block")
    ap.add_argument("--write", action="store_true", help="put the fresh figures into exact blocks and python comments")
    ap.add_argument("--prose", action="store_true", help="list the prose figures with no benchmark page or dated run")
    a = ap.parse_args(argv)
    problems: list[str] = []
    checked = 0
    if a.prose:
        found = [line for page in pages(a.pages or None) for line in unsourced(page)]
        print("\n".join(found + [f"{len(found)} unsourced paragraph(s)"]))
        return 1 if found else 0
    for page in pages(a.pages or None):
        fixes: dict = {}
        for b in blocks(page):
            if b["kind"] == "example":   # not rerun: the text before it says so, with the date
                if not (re.search(r"example run", b["before"], re.I) and re.search(r"\d{4}-\d{2}-\d{2}", b["before"])):
                    problems.append(f"{page}: `{b['command']}` is marked example but no 'example run' with a date precedes it")
                continue
            if a.only and b["kind"] != a.only:
                continue
            checked += 1
            found, fix = check_python(b) if b["kind"] == "python" else check_block(b, a.band)
            problems += found
            fixes.update(fix)
        if a.write and fixes:
            write(page, fixes)
    for p in problems:
        print(p)
    print(f"{checked} block(s) checked, {len(problems)} figure(s) moved" + (" (written)" if a.write and problems else ""))
    return 1 if problems and not a.write else 0


if __name__ == "__main__":
    sys.exit(main())
