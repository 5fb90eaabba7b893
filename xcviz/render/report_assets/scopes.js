/* xcviz report, the scope view: the model's own layers as boxes painted by how much of each XLA compiles
   (coverage), with its clusters, fallbacks and boundary bytes. Opening a scope lays out its children and its
   own ops with the vendored dagre, in the page, only that scope: a 100,000-op model costs what its largest
   scope does. A minimap shows where the view is; far out, only the scope names stay, drawn large enough to read. */
(function () {
  var R = window.XCREPORT, D = R && R.data, S = D && D.scope;
  if (!S) return;
  var $ = function (id) { return document.getElementById(id); };
  var NS = "http://www.w3.org/2000/svg";
  var recs = S.scopes, at = S.at, E = S.edges, svg = $("scopes"), mini = $("minimap");
  var view = { x: 0, y: 0, w: 1, h: 1 }, cur = -1, lay = null, els = {}, active = false, drag = null, dragged = false;
  var OPTS = {};   // dagre's graph options beside the defaults (a benchmark may try others)
  var end = recs.map(function (r, k) { return k + 1; });       // records are in preorder: k's are k .. end[k]-1
  for (var k = recs.length - 1; k > 0; k--) end[recs[k].u] = Math.max(end[recs[k].u], end[k]);

  function make(tag, attrs, parent) {
    var el = document.createElementNS(NS, tag);
    for (var a in attrs) el.setAttribute(a, attrs[a]);
    if (parent) parent.appendChild(el);
    return el;
  }
  function fmtBytes(n) {
    if (n < 1024) return n + " B";
    var units = ["KiB", "MiB", "GiB", "TiB"];
    for (var j = 0; j < units.length; j++) { n /= 1024; if (n < 1024 || j === 3) return n.toFixed(1) + " " + units[j]; }
  }
  function pct(r) { return r.o ? Math.round(100 * r.m / r.o) + "%" : "\u2013"; }
  // the heat: red where nothing compiles, amber half way, green where all of it does
  function heat(r) {
    if (!r.o) return "#eeeeee";
    var f = r.m / r.o;
    return "hsl(" + Math.round(120 * f) + ",65%," + (88 - 6 * Math.abs(f - 0.5)) + "%)";
  }
  function rep(k) { return recs[k].h === undefined ? k : recs[k].h; }
  function short(s, n) { s = String(s); return s.length <= n ? s : s.slice(0, n - 1) + "\u2026"; }

  // the item of record k's view that node i lies in: "n<i>" for its own ops, "s<child>" for a child's, null outside
  function itemOf(i, k) {
    var r = at[i];
    if (r === k) return "n" + i;
    if (r < k || r >= end[k]) return null;
    while (recs[r].u !== k) r = recs[r].u;
    return "s" + rep(r);
  }

  function items(k) {
    var out = [], rec = recs[k];
    rec.c.forEach(function (c) {
      if (recs[c].h !== undefined) return;
      var r = recs[c], lines = [r.x ? short(r.n, 26) + "  \u00d7" + r.x : short(r.n, 30),
                               r.o.toLocaleString("en") + " ops" + (r.x ? " each" : "") + " \u00b7 " + pct(r) + " compiled",
                               r.g + " cluster" + (r.g === 1 ? "" : "s") + " \u00b7 " + r.f + " fallback" + (r.f === 1 ? "" : "s"),
                               "boundary " + fmtBytes(r.b)];
      out.push({ id: "s" + c, rec: c, lines: lines, w: 210, h: 86 });
    });
    rec.k.forEach(function (i) {
      var n = D.nodes[i], lines = [short(n.name.split("/").pop(), 30), short(n.t, 30)];
      if (n.g >= 0) lines.push(D.clusters[n.g].id); else lines.push(short("fallback: " + n.c, 30));
      out.push({ id: "n" + i, node: i, lines: lines,
                 w: Math.max(120, 7 * Math.max.apply(null, lines.map(function (l) { return l.length; })) + 16), h: 52 });
    });
    return out;
  }

  function edges(k) {
    var agg = {}, out = [], ins = 0, outs = 0;
    for (var e = 0; e < E.length; e += 4) {
      var s = itemOf(E[e], k), t = itemOf(E[e + 1], k);
      if (s === null && t === null) continue;
      if (s === null) { s = "xin"; ins++; } else if (t === null) { t = "xout"; outs++; }
      if (s === t) continue;
      var key = s + ">" + t, a = agg[key];
      if (!a) { a = agg[key] = { s: s, t: t, b: 0, k: E[e + 3], n: 0 }; out.push(a); }
      a.n++; if (E[e + 2] > 0) a.b += E[e + 2];
      if (E[e + 3] === 1) a.k = 1;
    }
    return { list: out, ins: ins, outs: outs };
  }

  /* ---- open a scope: lay out its items with dagre and draw them ---- */
  function open(k, keepView) {
    var t0 = performance.now();
    cur = k;
    if (cache[k] && !OPTS.ranker) { lay = cache[k]; return shown(k, keepView, t0); }
    var its = items(k), ed = edges(k);
    if (ed.ins) its.unshift({ id: "xin", lines: ["from outside", ed.ins + " edge" + (ed.ins === 1 ? "" : "s")], w: 140, h: 40 });
    if (ed.outs) its.push({ id: "xout", lines: ["to outside", ed.outs + " edge" + (ed.outs === 1 ? "" : "s")], w: 140, h: 40 });
    var g = new dagre.graphlib.Graph();
    g.setGraph(Object.assign({ rankdir: "TB", nodesep: 24, ranksep: 40, marginx: 20, marginy: 20 }, OPTS));
    g.setDefaultEdgeLabel(function () { return {}; });
    its.forEach(function (it) { g.setNode(it.id, { width: it.w, height: it.h }); });
    ed.list.forEach(function (e) { g.setEdge(e.s, e.t); });
    dagre.layout(g);
    var gr = g.graph();
    lay = { items: its, edges: ed.list, w: gr.width || 100, h: gr.height || 100, at: {} };
    its.forEach(function (it) { var p = g.node(it.id); it.x = p.x; it.y = p.y; lay.at[it.id] = it; });
    ed.list.forEach(function (e) { e.p = g.edge(e.s, e.t).points; });
    cache[k] = lay;
    return shown(k, keepView, t0);
  }
  var cache = {};   // record -> its layout: a scope opened again is drawn, not laid out again

  function shown(k, keepView, t0) {
    draw();
    crumbs();
    if (!keepView) start();
    lay.ms = performance.now() - t0;
    svg.setAttribute("data-open", recs[k].p);
    svg.setAttribute("data-ms", lay.ms.toFixed(1));
    return lay;
  }

  function draw() {
    svg.innerHTML = ""; els = {};
    var defs = make("defs", {}, svg);
    [["sarrow", "#8A8A8A"], ["sarrow-b", "#FFB000"]].forEach(function (a) {
      var m = make("marker", { id: a[0], viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "6", markerHeight: "6",
                               orient: "auto" }, defs);
      make("path", { d: "M0,0 L10,5 L0,10 z", fill: a[1] }, m);
    });
    var le = make("g", { "class": "s-edges" }, svg), li = make("g", { "class": "s-items" }, svg);
    lay.edges.forEach(function (e) {
      var d = e.p.map(function (p, j) { return (j ? "L" : "M") + p.x.toFixed(1) + " " + p.y.toFixed(1); }).join(" ");
      var ge = make("g", { "class": "s-edge" + (e.k === 1 ? " b" : "") }, le);
      make("path", { d: d, "marker-end": "url(#sarrow" + (e.k === 1 ? "-b" : "") + ")",
                     "stroke-width": Math.min(6, 1 + Math.log(1 + e.n) / 2) }, ge);
      make("title", {}, ge).textContent = e.n + " tensor" + (e.n === 1 ? "" : "s") + " \u00b7 " + fmtBytes(e.b) +
        (e.k === 1 ? " across a cluster boundary" : "");
    });
    lay.items.forEach(function (it) {
      var x = it.x - it.w / 2, y = it.y - it.h / 2, cls = "s-item", fill = "#f4f4f4", stroke = "#8A8A8A";
      if (it.rec !== undefined) { cls += " scope"; fill = heat(recs[it.rec]); stroke = "#555"; }
      else if (it.node !== undefined) {
        var n = D.nodes[it.node];
        cls += n.g >= 0 ? " member" : " fb";
        if (n.g >= 0) { stroke = D.clusters[n.g].color; fill = "#fff"; } else { stroke = "#D62728"; fill = "#FDE3E3"; }
      } else cls += " io";
      var g = make("g", { "class": cls, "data-id": it.id }, li);
      if (it.node !== undefined) g.setAttribute("data-name", D.nodes[it.node].name);
      if (it.rec !== undefined) g.setAttribute("data-name", recs[it.rec].n);
      make("rect", { x: x, y: y, width: it.w, height: it.h, rx: 6, fill: fill, stroke: stroke }, g);
      if (it.rec !== undefined) strip(g, it, x, y);
      var step = it.rec !== undefined ? 17 : 14, top = y + (it.rec !== undefined ? 18 : 16);
      it.lines.forEach(function (line, j) {
        var t = make("text", { x: it.x, y: top + j * step, "text-anchor": "middle", "class": j === 0 ? "name" : "sub" }, g);
        t.textContent = line;
      });
      make("title", {}, g).textContent = it.rec !== undefined ? recs[it.rec].p + " (click to open)" : it.lines.join("\n");
      els[it.id] = g;
    });
    drawMini();
  }

  // a scope box's bottom edge: one cell per child, painted by the child's coverage (the heat one level down)
  function strip(g, it, x, y) {
    var kids = recs[it.rec].c.filter(function (c) { return recs[c].h === undefined; }).slice(0, 60);
    if (kids.length < 2) return;
    var w = (it.w - 16) / kids.length;
    kids.forEach(function (c, j) {
      make("rect", { x: x + 8 + j * w, y: y + it.h - 12, width: Math.max(1, w - 1), height: 7, fill: heat(recs[c]),
                     stroke: "none", "class": "cell" }, g);
    });
  }

  /* ---- breadcrumb: the open scope's ancestors, each one click away ---- */
  function crumbs() {
    var nav = $("crumbs"), path = [], k = cur;
    while (k >= 0) { path.unshift(k); k = recs[k].u; }
    nav.innerHTML = "";
    path.forEach(function (r, j) {
      if (j) nav.appendChild(document.createTextNode(" / "));
      var b = document.createElement("button");
      b.type = "button"; b.className = "crumb"; b.textContent = recs[r].n; b.dataset.rec = r;
      b.onclick = function () { open(r); details(r); };
      nav.appendChild(b);
    });
  }

  // a scope's numbers, and for a repeated block its copies, each openable
  function details(k) {
    var r = recs[k], box = $("details"), h = function (tag, text) { var el = document.createElement(tag); el.textContent = text; return el; };
    box.innerHTML = "";
    box.appendChild(h("h3", r.p || "(model)"));
    box.appendChild(h("p", r.o.toLocaleString("en") + " ops \u00b7 " + pct(r) + " in clusters \u00b7 " + r.g + " clusters \u00b7 " +
                            r.f + " fallbacks \u00b7 boundary " + fmtBytes(r.b)));
    if (r.x) {
      box.appendChild(h("b", "\u00d7" + r.x + " identical (same ops, wiring and clustering)"));
      var ul = document.createElement("ul");
      r.same.concat(r.differ).forEach(function (c, j) {
        var li = h("li", recs[c].n + (j >= r.same.length ? " (differs)" : "")), a = li;
        a.className = "open-scope"; a.onclick = function () { openExact(c); };
        ul.appendChild(li);
      });
      box.appendChild(ul);
    }
  }
  function openExact(k) { open(k); details(k); }   // a folded copy opens as itself

  /* ---- view: pan, zoom, the first view, legibility ---- */
  function scale() { var r = svg.getBoundingClientRect(); return r.width / Math.max(view.w, 1e-9); }
  function apply() {
    svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" "));
    var s = scale(), far = 11 * s < 8;
    svg.classList.toggle("far", far);
    // far out the scope names grow (up to their box's width) so that they stay readable on screen
    svg.querySelectorAll(".s-item.scope text.name").forEach(function (t) {
      var fit = 200 / Math.max(4, 0.6 * t.textContent.length);
      t.style.fontSize = far ? Math.min(fit, 11 / s) + "px" : "";
    });
    miniView();
  }
  function fit() {
    var r = svg.getBoundingClientRect(), W = lay.w, H = lay.h;
    var s = Math.max(W / Math.max(r.width, 1), H / Math.max(r.height, 1), 0.8);   // at most 1.25:1
    view.w = r.width * s; view.h = r.height * s;
    view.x = -(view.w - W) / 2; view.y = -(view.h - H) / 2;
    apply();
  }
  // fitted when the text stays readable (≥ 9 px), else the top of the scope at 1:1
  function start() {
    fit();
    if (scale() * 11 < 9) {
      var r = svg.getBoundingClientRect();
      view.w = r.width; view.h = r.height; view.x = lay.w / 2 - view.w / 2; view.y = 0;
      apply();
    }
  }
  function zoom(f, px, py) {
    var r = svg.getBoundingClientRect();
    if (px === undefined) { px = r.left + r.width / 2; py = r.top + r.height / 2; }
    var ux = view.x + (px - r.left) / r.width * view.w, uy = view.y + (py - r.top) / r.height * view.h;
    view.w *= f; view.h *= f;
    view.x = ux - (px - r.left) / r.width * view.w; view.y = uy - (py - r.top) / r.height * view.h;
    apply();
  }
  function centre(id) {
    var it = lay.at[id], r = svg.getBoundingClientRect();
    if (!it) return;
    if (scale() < 0.8) { view.w = r.width; view.h = r.height; }
    view.x = it.x - view.w / 2; view.y = it.y - view.h / 2;
    apply();
  }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    zoom(Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002))), ev.clientX, ev.clientY);
  }, { passive: false });
  svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY }; dragged = false; });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var r = svg.getBoundingClientRect(), dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) dragged = true;
    view.x -= dx / r.width * view.w; view.y -= dy / r.height * view.h;
    drag.x = ev.clientX; drag.y = ev.clientY;
    apply();
  });
  window.addEventListener("mouseup", function () { drag = null; });
  svg.addEventListener("click", function (ev) {
    if (dragged) return;
    var g = ev.target.closest(".s-item");
    if (!g) return;
    var id = g.dataset.id;
    if (id.charAt(0) === "s") { var k = +id.slice(1); open(k); details(k); }
    else if (id.charAt(0) === "n") { mark([id], "sel"); R.selectNode(+id.slice(1), true); }
    else if (recs[cur].u >= 0) { var up = recs[cur].u; open(up); details(up); }   // "from/to outside": one level up
  });

  /* ---- minimap: the whole open scope, painted, with the view's rectangle; a click moves there ---- */
  var miniRect = null;
  function drawMini() {
    mini.innerHTML = "";
    mini.setAttribute("viewBox", [0, 0, lay.w, lay.h].join(" "));
    lay.items.forEach(function (it) {
      var fill = it.rec !== undefined ? heat(recs[it.rec]) : it.node !== undefined ?
        (D.nodes[it.node].g >= 0 ? D.clusters[D.nodes[it.node].g].color : "#D62728") : "#cccccc";
      make("rect", { x: it.x - it.w / 2, y: it.y - it.h / 2, width: it.w, height: it.h, fill: fill, stroke: "#666",
                     "stroke-width": Math.max(1, lay.w / 200) }, mini);
    });
    miniRect = make("rect", { "class": "mini-view", x: 0, y: 0, width: 1, height: 1,
                              "stroke-width": Math.max(2, Math.max(lay.w, lay.h) / 120) }, mini);
  }
  function miniView() {
    if (!miniRect) return;
    miniRect.setAttribute("x", view.x); miniRect.setAttribute("y", view.y);
    miniRect.setAttribute("width", view.w); miniRect.setAttribute("height", view.h);
  }
  mini.addEventListener("click", function (ev) {
    var r = mini.getBoundingClientRect(), s = Math.max(lay.w / r.width, lay.h / r.height);
    var ox = (r.width * s - lay.w) / 2, oy = (r.height * s - lay.h) / 2;
    view.x = (ev.clientX - r.left) * s - ox - view.w / 2; view.y = (ev.clientY - r.top) * s - oy - view.h / 2;
    apply();
  });

  function mark(ids, cls) {
    svg.querySelectorAll("." + cls).forEach(function (el) { el.classList.remove(cls); });
    ids.forEach(function (id) { if (els[id]) els[id].classList.add(cls); });
  }

  /* ---- what the rest of the page asks: reveal a node (search, table rows), a cluster, a search ---- */
  function reveal(i) {
    open(at[i]);
    mark(["n" + i], "sel");
    centre("n" + i);
  }
  function revealCluster(k) {
    var ms = D.clusters[k].members, r = at[ms[0]];
    ms.forEach(function (i) { while (r > 0 && !(at[i] >= r && at[i] < end[r])) r = recs[r].u; });
    open(r);
    var ids = {};
    ms.forEach(function (i) { var id = itemOf(i, cur); if (id) ids[id] = 1; });
    mark(Object.keys(ids), "hl");
  }
  function search(query) {
    mark([], "match"); mark([], "has-match");
    if (!query) return [];
    var re;
    try { re = new RegExp(query, "i"); } catch (err) { re = new RegExp(query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
    var hits = [];
    D.nodes.forEach(function (n, i) { if (re.test(n.name) || re.test(n.op) || re.test(n.t)) hits.push(i); });
    if (!hits.length) return hits;
    open(at[hits[0]]);
    var ids = {}, boxes = {};
    hits.forEach(function (i) { var id = itemOf(i, cur); if (id) (id.charAt(0) === "n" ? ids : boxes)[id] = 1; });
    mark(Object.keys(ids), "match");
    Object.keys(boxes).forEach(function (id) { if (els[id]) els[id].classList.add("has-match"); });
    centre("n" + hits[0]);
    return hits;
  }

  /* ---- the two views: the scope view, and (for a graph small enough to draw whole) the picture ---- */
  function show(on) {
    active = on;
    svg.style.display = on ? "" : "none"; mini.style.display = on ? "" : "none";
    $("graph").style.display = on ? "none" : "";
    $("crumbs").style.display = on ? "" : "none";
    $("replay").style.visibility = on ? "hidden" : "";
    $("view-toggle").textContent = on ? "whole graph" : "by scope";
    if (on && lay) apply();
    if (on) $("decision").textContent = HINT;
    else if (D.frames && D.frames.length) R.showFrame(R.frame());
  }
  var HINT = "by scope: each box a layer of the model, painted by the share of its ops that XLA compiles (red none, " +
    "green all); click a box to open it, a name in the path above to go back";
  var toggle = $("view-toggle");
  toggle.hidden = !D.items.length;
  toggle.onclick = function () { show(!active); if (!active && window.XC) XC.fit(); };
  // the first view: down through wrappers (one child, or one that holds nearly all and little beside it)
  var first = 0;
  for (;;) {
    var f = recs[first], big = f.c.filter(function (c) { return recs[c].o >= 0.75 * f.o; });
    if (big.length === 1 && (f.c.length + f.k.length <= 3 || recs[big[0]].o >= 0.95 * f.o)) first = big[0]; else break;
  }
  show(D.view === "scopes");
  if (!active) { svg.style.display = ""; }     // laid out once while visible (its size is needed), then hidden
  open(first);
  if (active) details(first);
  if (!active) svg.style.display = "none";
  $("fit").addEventListener("click", function () { if (active) fit(); });
  $("zoom-in").addEventListener("click", function () { if (active) zoom(0.8); });
  $("zoom-out").addEventListener("click", function () { if (active) zoom(1.25); });
  window.XS = { active: function () { return active; }, open: open, reveal: reveal, revealCluster: revealCluster,
                search: search, show: show, fit: fit, zoom: zoom, current: function () { return cur; },
                layout: function () { return lay; }, records: recs, options: OPTS };
})();
