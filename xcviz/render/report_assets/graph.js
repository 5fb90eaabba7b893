/* xcviz report, the picture: draws boxes and splines at the positions Graphviz computed (never re-laid out),
   pans, zooms, fits, searches and highlights. No library, no network. */
"use strict";
var XC = {};
(function () {
  var NS = "http://www.w3.org/2000/svg";
  var svg, layers = {}, view = { x: 0, y: 0, w: 1, h: 1 }, D;
  XC.el = {};        // item id -> <g>
  XC.edgeEls = [];   // [{e, g}] in data order

  function make(tag, attrs, parent) {
    var el = document.createElementNS(NS, tag);
    for (var k in attrs) el.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(el);
    return el;
  }
  XC.make = make;

  function splinePath(p) {
    if (p.length < 4) return "";
    var d = "M" + p[0] + " " + p[1];
    for (var k = 2; k + 6 <= p.length; k += 6) d += " C" + p.slice(k, k + 6).join(" ");
    return d;
  }

  // the class of an item: cluster member, fallback, graph input/output, collapsed cluster
  function itemClass(id) {
    var kind = id.charAt(0), rec;
    if (kind === "i" || kind === "o") return "item io";
    if (kind === "g") return "item group";
    rec = D.nodes[+id.slice(1)];
    return rec.g >= 0 ? "item member" : "item fb";
  }
  XC.itemClass = itemClass;

  function color(id) {
    var kind = id.charAt(0);
    if (kind === "g") return D.clusters[+id.slice(1)].color;
    if (kind === "n" && D.nodes[+id.slice(1)].g >= 0) return D.clusters[D.nodes[+id.slice(1)].g].color;
    return null;
  }

  XC.drawItem = function (it, parent, dx, dy) {
    var b = it.box, x = b[0] - b[2] / 2 + (dx || 0), y = b[1] - b[3] / 2 + (dy || 0);
    var g = make("g", { "class": itemClass(it.id), "data-id": it.id }, parent);
    var c = color(it.id);
    var rect = make("rect", { x: x, y: y, width: b[2], height: b[3], rx: 4 }, g);
    if (c) { rect.setAttribute("stroke", c); rect.setAttribute("fill", it.id.charAt(0) === "g" ? c + "40" : "#fff"); }
    var n = it.lines.length, step = 12, top = b[1] + (dy || 0) - (n - 1) * step / 2 + 3.5;
    it.lines.forEach(function (line, k) {
      var t = make("text", { x: b[0] + (dx || 0), y: top + k * step, "text-anchor": "middle" }, g);
      if (k === 0) t.setAttribute("font-weight", "bold");
      t.textContent = line;
    });
    var name = it.id.charAt(0) === "n" ? D.nodes[+it.id.slice(1)].name : it.lines[0];
    g.setAttribute("data-name", name);
    make("title", {}, g).textContent = it.lines.join("\n");
    XC.el[it.id] = g;
    return g;
  };

  XC.drawEdge = function (e, parent, dx, dy) {
    var g = make("g", { "class": "edge " + e.k, "data-s": e.s, "data-t": e.t }, parent);
    var p = e.p.map(function (v, k) { return v + ((k % 2 ? dy : dx) || 0); });
    make("path", { d: splinePath(p), "marker-end": "url(#arrow" + (e.k === "b" ? "-b" : "") + ")" }, g);
    make("title", {}, g).textContent = e.tip;
    return g;
  };

  XC.draw = function (data) {
    D = data;
    svg = document.getElementById("graph");
    XC.itemById = {};
    D.items.forEach(function (it) { XC.itemById[it.id] = it; });
    var defs = make("defs", {}, svg);
    [["arrow", "#8A8A8A"], ["arrow-b", "#FFB000"]].forEach(function (a) {
      var m = make("marker", { id: a[0], viewBox: "0 0 10 10", refX: "1", refY: "5", markerWidth: "5",
                               markerHeight: "5", orient: "auto" }, defs);
      make("path", { d: "M0,0 L10,5 L0,10 z", fill: a[1] }, m);
    });
    ["hulls", "edges", "items", "overlay"].forEach(function (n) { layers[n] = make("g", { "class": n }, svg); });
    D.edges.forEach(function (e) { XC.edgeEls.push({ e: e, g: XC.drawEdge(e, layers.edges) }); });
    D.items.forEach(function (it) { XC.drawItem(it, layers.items); });
    XC.layers = layers;
    panZoom();
    XC.start();
  };

  // member boxes -> one rounded box per group, labelled at its top left
  XC.hull = function (ids, colour, label, cls) {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    ids.forEach(function (id) {
      var it = XC.itemById[id]; if (!it) return;
      var b = it.box;
      x0 = Math.min(x0, b[0] - b[2] / 2); x1 = Math.max(x1, b[0] + b[2] / 2);
      y0 = Math.min(y0, b[1] - b[3] / 2); y1 = Math.max(y1, b[1] + b[3] / 2);
    });
    if (x0 === Infinity) return null;
    var g = make("g", { "class": "hull-group" }, layers.hulls);
    make("rect", { "class": "hull " + (cls || ""), x: x0 - 8, y: y0 - 22, width: x1 - x0 + 16, height: y1 - y0 + 30,
                   rx: 8, fill: colour, stroke: colour }, g);
    var t = make("text", { "class": "hull-label", x: x0 - 4, y: y0 - 9, fill: colour }, g);
    t.textContent = label;
    return g;
  };

  function apply() { svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" ")); }
  XC.viewBox = function () { return [view.x, view.y, view.w, view.h]; };

  XC.fit = function () {
    var r = svg.getBoundingClientRect(), W = D.width + 40, H = D.height + 40;
    var s = Math.max(W / Math.max(r.width, 1), H / Math.max(r.height, 1));
    view.w = r.width * s; view.h = r.height * s;
    view.x = -20 - (view.w - W) / 2; view.y = -20 - (view.h - H) / 2;
    apply();
  };

  // zoom by `f` (< 1 zooms in) keeping the point under (px, py), in client pixels, fixed
  XC.zoom = function (f, px, py) {
    var r = svg.getBoundingClientRect();
    if (px === undefined) { px = r.left + r.width / 2; py = r.top + r.height / 2; }
    var ux = view.x + (px - r.left) / r.width * view.w, uy = view.y + (py - r.top) / r.height * view.h;
    view.w *= f; view.h *= f;
    view.x = ux - (px - r.left) / r.width * view.w; view.y = uy - (py - r.top) / r.height * view.h;
    apply();
  };

  // show the rectangle (x, y, w, h) whole, centred
  XC.showBox = function (x, y, w, h) {
    var r = svg.getBoundingClientRect(), s = Math.max((w + 40) / Math.max(r.width, 1), (h + 40) / Math.max(r.height, 1));
    view.w = r.width * s; view.h = r.height * s;
    view.x = x + w / 2 - view.w / 2; view.y = y + h / 2 - view.h / 2;
    apply();
  };

  // centre an item; zoomed out beyond reading (more than 2 points per pixel), come in to 1:1 first
  XC.center = function (id) {
    var it = XC.itemById[id], r = svg.getBoundingClientRect();
    if (!it) return;
    if (view.w > 2 * r.width) { view.w = r.width; view.h = r.height; }
    view.x = it.box[0] - view.w / 2; view.y = it.box[1] - view.h / 2;
    apply();
  };

  // pan (zoom kept) so the items' middle is the view's: the replay follows its newest merge
  XC.panTo = function (ids) {
    var xs = [], ys = [];
    ids.forEach(function (id) { var it = XC.itemById[id]; if (it) { xs.push(it.box[0]); ys.push(it.box[1]); } });
    if (!xs.length) return;
    view.x = (Math.min.apply(null, xs) + Math.max.apply(null, xs)) / 2 - view.w / 2;
    view.y = (Math.min.apply(null, ys) + Math.max.apply(null, ys)) / 2 - view.h / 2;
    apply();
  };

  // the first view: the whole picture if its text stays readable, else its top at 1:1 (`fit` shows all)
  XC.start = function () {
    XC.fit();
    var r = svg.getBoundingClientRect();
    if (view.w > 4 * r.width) {
      view.w = r.width; view.h = r.height; view.x = D.width / 2 - view.w / 2; view.y = -20;
      apply();
    }
  };

  function panZoom() {
    var drag = null;
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      XC.zoom(Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002))), ev.clientX, ev.clientY);
    }, { passive: false });
    svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY, moved: false }; });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var r = svg.getBoundingClientRect(), dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
      view.x -= dx / r.width * view.w; view.y -= dy / r.height * view.h;
      drag.x = ev.clientX; drag.y = ev.clientY;
      apply();
    });
    window.addEventListener("mouseup", function () { XC.dragged = drag && drag.moved; drag = null; });
  }

  // highlight: `items` (ids) and edges for which keepEdge(e) is true; everything else dimmed
  XC.highlight = function (items, keepEdge) {
    XC.clear();
    Object.keys(XC.el).forEach(function (id) {
      XC.el[id].classList.add(items.has(id) ? "hl" : "dim");
    });
    XC.edgeEls.forEach(function (x) { x.g.classList.add(keepEdge(x.e) ? "hl" : "dim"); });
  };

  XC.clear = function () {
    svg.querySelectorAll(".hl, .dim, .match, .sel").forEach(function (el) {
      el.classList.remove("hl", "dim", "match", "sel");
    });
  };

  // search: a case-insensitive regex over node names and ops (a bad regex is matched as plain text)
  XC.search = function (query) {
    XC.clear();
    if (!query) return [];
    var re;
    try { re = new RegExp(query, "i"); } catch (err) { re = new RegExp(query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
    var hits = [];
    D.nodes.forEach(function (n, i) {
      if (re.test(n.name) || re.test(n.op) || re.test(n.t)) hits.push(i);
    });
    hits.forEach(function (i) {
      var id = XC.el["n" + i] ? "n" + i : "g" + D.nodes[i].g;
      if (XC.el[id]) XC.el[id].classList.add("match");
    });
    if (hits.length) XC.center(XC.el["n" + hits[0]] ? "n" + hits[0] : "g" + D.nodes[hits[0]].g);
    return hits;
  };
})();
