"""Reproduce docs/model_explorer.png: xcviz's `cluster` overlay on a model in Google's Model Explorer.

Runs the README's command (xcviz export --model-explorer, then model-explorer with the ONNX adapter and the
overlays), opens the page in a headless Chromium with Playwright, shows the `xcviz cluster` node data, expands
all layers, zooms to fit and saves the screenshot; the server is stopped at the end.

    python tools/model_explorer_screenshot.py [MODEL] [-o docs/model_explorer.png]

Needs `pip install -e '.[me]'` (ai-edge-model-explorer, model-explorer-onnx), Playwright for Python and a
Chromium (default /usr/bin/chromium; `--chromium PATH` for another).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]


def start_server(model: Path, overlays: list[Path], port: int, log: Path) -> tuple[subprocess.Popen, str]:
    """Start `model-explorer` and return it with the URL it prints (which carries the model and node data)."""
    cmd = ["model-explorer", str(model), "--no_open_in_browser", f"--port={port}",
           "--extensions=model_explorer_onnx", "--node_data_paths=" + ",".join(map(str, overlays))]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        m = re.search(r"(http://localhost:\d+/\S+)", log.read_text())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    stop_server(proc)
    sys.exit(f"model-explorer did not start:\n{log.read_text()}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def screenshot(url: str, out: Path, chromium: str, overlay: str, size: tuple[int, int]) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            page.goto(url)
            # The "Node data providers" panel lists one row per overlay once the graph is loaded.
            name = page.locator(".run-name", has_text=overlay)
            name.wait_for(timeout=90_000)
            page.wait_for_timeout(1000)
            # Show this overlay (Model Explorer shows the last-loaded one by default): its eye icon.
            page.locator(".index-row", has=name).locator(".icon-container.visibility").click()
            page.wait_for_timeout(1000)
            page.locator("div.expand-all").click()   # toolbar: expand all layers
            page.wait_for_timeout(2000)
            page.locator("div.zoom-fit").click()     # toolbar: zoom to fit
            page.mouse.move(size[0] // 3, size[1] - 5)  # away from the toolbar, so no tooltip is shown
            page.wait_for_timeout(2000)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", default=str(ROOT / "graphs" / "resnet_mini.onnx"))
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "model_explorer.png"))
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--overlay", default="xcviz cluster", help="node-data name to show (default: %(default)s)")
    args = ap.parse_args()

    model = Path(args.model).resolve()
    with tempfile.TemporaryDirectory(prefix="xcviz_me_") as tmp:
        me_dir = Path(tmp) / "me"
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        subprocess.run([sys.executable, "-m", "xcviz", "export", str(model), "--model-explorer", str(me_dir)],
                       check=True, env=env)
        overlays = sorted(me_dir.glob("*.json"))
        proc, url = start_server(model, overlays, args.port, Path(tmp) / "server.log")
        try:
            screenshot(url, Path(args.output), args.chromium, args.overlay, (1400, 900))
        finally:
            stop_server(proc)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
