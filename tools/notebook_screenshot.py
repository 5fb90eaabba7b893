"""docs/notebook.png: tests/notebooks/show.ipynb executed by a real kernel (nbclient + ipykernel), its cells and
outputs put on one page as a notebook shows them, photographed with headless Chromium (the report's frame
switched to its scope view, the layer that differs opened).

    python tools/notebook_screenshot.py [OUT.png]     # needs the browser extra and /usr/bin/chromium"""
from __future__ import annotations

import html
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(ROOT, "tests", "notebooks", "show.ipynb")
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CSS = """body{font:13px -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:16px;background:#fff;width:1240px}
.cell{margin:0 0 14px}.in{font:12.5px Menlo,Consolas,monospace;background:#f5f5f5;border:1px solid #e0e0e0;
padding:6px 10px;white-space:pre;border-radius:3px}.prompt{color:#307fc1;font:12px Menlo,monospace;margin:2px 0}
.out{padding:4px 10px}"""


def page(nb) -> str:
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"]
    n = 0
    for c in nb.cells:
        if c.cell_type != "code" or "dir(xcviz)" in c.source:
            continue
        n += 1
        out.append(f"<div class='cell'><div class='prompt'>In [{n}]:</div><div class='in'>{html.escape(c.source)}</div>")
        for o in c.outputs:
            data = o.get("data", {})
            body = data.get("text/html") or f"<pre>{html.escape(data.get('text/plain', ''))}</pre>"
            out.append(f"<div class='out'>{body}</div>")
        out.append("</div>")
    return "".join(out) + "</body></html>"


def main() -> None:
    import nbclient
    import nbformat
    from playwright.sync_api import sync_playwright

    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "notebook.png")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": ROOT}}).execute()
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "notebook.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(page(nb))
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pg = b.new_page(viewport={"width": 1280, "height": 1200}, device_scale_factor=1)
            pg.goto("file://" + path)
            frame = pg.frame_locator("iframe")
            frame.locator("#view-toggle").click()
            frame.locator("#scopes .s-item.scope").first.wait_for()
            frame.locator("#scopes .s-item.scope[data-name='layers.2']").click()   # the layer that differs
            pg.wait_for_timeout(300)
            pg.screenshot(path=target, full_page=True)
            b.close()
    print(target)


if __name__ == "__main__":
    main()
