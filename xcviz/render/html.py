"""One self-contained HTML page that plays the frames: play/pause, a slider and the current decision.

The SVG frames are inlined as JSON in the page (no external file, script, font or stylesheet), so it works
offline and from a file:// URL."""
from __future__ import annotations

import html
import json

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 1em 2em; color: #222; }}
#bar {{ display: flex; gap: 1em; align-items: center; margin: .5em 0; }}
#slider {{ flex: 1; max-width: 40em; }}
#decision {{ white-space: pre-line; font-family: Menlo, Consolas, monospace; background: #f6f6f6;
  border-left: 4px solid #FFB000; padding: .5em .8em; min-height: 3em; }}
#frame svg {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<h1>{title}</h1>
<div id="bar">
<button id="play" type="button">&#9654; play</button>
<button id="prev" type="button">&#8592;</button>
<input id="slider" type="range" min="0" max="{last}" value="0" step="1" aria-label="frame">
<button id="next" type="button">&#8594;</button>
<span id="counter"></span>
</div>
<div id="decision"></div>
<div id="frame"></div>
<script id="frames" type="application/json">{data}</script>
<script>
(function () {{
  var frames = JSON.parse(document.getElementById("frames").textContent);
  var slider = document.getElementById("slider"), play = document.getElementById("play");
  var timer = null, i = 0;
  function show(k) {{
    i = Math.max(0, Math.min(frames.length - 1, k));
    slider.value = i;
    document.getElementById("frame").innerHTML = frames[i].svg;
    document.getElementById("decision").textContent = frames[i].text;
    document.getElementById("counter").textContent = "frame " + (i + 1) + " / " + frames.length;
  }}
  function stop() {{ clearInterval(timer); timer = null; play.innerHTML = "&#9654; play"; }}
  play.onclick = function () {{
    if (timer) {{ stop(); return; }}
    if (i === frames.length - 1) show(0);
    play.innerHTML = "&#10074;&#10074; pause";
    timer = setInterval(function () {{ if (i >= frames.length - 1) stop(); else show(i + 1); }}, {interval});
  }};
  slider.oninput = function () {{ stop(); show(parseInt(slider.value, 10)); }};
  document.getElementById("prev").onclick = function () {{ stop(); show(i - 1); }};
  document.getElementById("next").onclick = function () {{ stop(); show(i + 1); }};
  document.addEventListener("keydown", function (e) {{
    if (e.key === "ArrowLeft") {{ stop(); show(i - 1); }}
    if (e.key === "ArrowRight") {{ stop(); show(i + 1); }}
    if (e.key === " ") {{ e.preventDefault(); play.onclick(); }}
  }});
  show(0);
}})();
</script>
</body>
</html>
"""


def inline_svg(svg: str) -> str:
    """Drop the XML prolog, DOCTYPE and comments before <svg> (an inline SVG needs none of them)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def frames_page(title: str, frames: list[tuple[str, str]], interval_ms: int = 1200) -> str:
    """`frames` as (svg text, decision text) pairs -> the HTML page as text."""
    data = json.dumps([{"svg": inline_svg(svg), "text": text} for svg, text in frames], ensure_ascii=False)
    data = data.replace("</", "<\\/").replace("<!--", "\\u003c!--")   # cannot close the <script> element early
    return _PAGE.format(title=html.escape(title), last=max(0, len(frames) - 1), data=data, interval=interval_ms)
