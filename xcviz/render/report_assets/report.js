/* xcviz report, the page: summary, sortable and filterable tables, node details with the `explain` story,
   cluster highlight, collapsed clusters that expand on click, and the formation replay. */
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  /* a big graph's records leave out what is the common case (report_html_scopes.compact_records) */
  var TYPES = D.node_defaults ? D.node_defaults.types : null;
  if (D.node_defaults) D.nodes.forEach(function (n) {
    for (var key in D.node_defaults) if (n[key] === undefined && key !== "types") n[key] = D.node_defaults[key];
    if (n.op === undefined) n.op = n.t;
  });
  // inputs as [ref, type number] and outputs as type numbers (a big graph's records): the texts, when shown
  function typed(xs) {
    return TYPES ? xs.map(function (x) { return typeof x === "number" ? TYPES[x] : typeof x === "string" ? x : x[0] + ": " + TYPES[x[1]]; }) : xs;
  }
  var $ = function (id) { return document.getElementById(id); };

  function h(tag, text, cls) {
    var el = document.createElement(tag);
    if (text !== undefined && text !== null) el.textContent = text;
    if (cls) el.className = cls;
    return el;
  }
  function fmtBytes(n) {
    if (n === null || n === undefined) return "unknown";
    if (n < 1024) return n + " B";
    var units = ["KiB", "MiB", "GiB", "TiB"];
    for (var k = 0; k < units.length; k++) { n /= 1024; if (n < 1024 || k === 3) return n.toFixed(1) + " " + units[k]; }
  }
  function fmtCount(n) {   /* 27673216 -> "27.7 M", as the terminal tables write counts */
    if (n === null || n === undefined) return "unknown";
    if (Math.abs(n) < 1000) return String(n);
    var units = ["k", "M", "G", "T", "P"], k = -1;
    while (Math.abs(n) >= 1000 && k < units.length - 1) { n /= 1000; k++; }
    return n.toFixed(1) + " " + units[k];
  }
  function fmtX(x) { return x === null || x === undefined ? "unknown" : x.toFixed(2) + "\u00d7"; }
  function fmtNum(x, d) { return x === null || x === undefined ? "" : (+x).toPrecision(d || 3); }

  /* ---- summary and tables ---- */
  D.summary.forEach(function (row) {
    var tr = h("tr"); tr.appendChild(h("th", row[0])); tr.appendChild(h("td", row[1]));
    $("summary-table").appendChild(tr);
  });

  // heads: [label, numeric]; rows: [{cells: [[text, sort value, class?]], click}]
  // a table is drawn from its data: sorted and filtered there, and only its first TABLE_ROWS matching rows
  // made (a 100,000-op graph's 8,000 fallbacks would cost the page seconds of layout); "show all" makes the rest
  var TABLE_ROWS = 500, TABLES = {};
  function table(id, heads, rows) {
    var t = $(id), thead = h("thead"), tr = h("tr"), body = h("tbody");
    heads.forEach(function (hd, c) {
      var th = h("th", hd[0]);
      th.onclick = function () { sortBy(id, c, hd[1], th); };
      tr.appendChild(th);
    });
    thead.appendChild(tr); t.appendChild(thead);
    t.appendChild(body);
    rows.forEach(function (r) {
      r.v = r.cells.map(function (cell) { return cell[1] === null || cell[1] === undefined ? "" : String(cell[1]); });
      r.text = r.cells.map(function (cell) { return cell[0]; }).join(" ").toLowerCase();
    });
    TABLES[id] = { heads: heads, rows: rows, body: body, query: "", limit: TABLE_ROWS };
    fill(id);
  }
  function fill(id) {
    var T = TABLES[id], body = T.body, shown = 0, left = 0;
    body.innerHTML = "";
    T.rows.forEach(function (r) {
      if (T.query && r.text.indexOf(T.query) < 0) return;
      if (shown >= T.limit) { left++; return; }
      shown++;
      var row = h("tr");
      r.cells.forEach(function (cell, c) {
        var td = h("td", cell[0], (T.heads[c][1] ? "num " : "") + (cell[2] || ""));
        td.dataset.v = r.v[c];
        row.appendChild(td);
      });
      row.dataset.key = r.key;
      row.onclick = function () { document.querySelectorAll("tr.sel").forEach(function (x) { x.classList.remove("sel"); });
                                  row.classList.add("sel"); r.click(); };
      if (r.swatch) { var sw = h("span", null, "swatch"); sw.style.background = r.swatch; row.cells[0].insertBefore(sw, row.cells[0].firstChild); }
      body.appendChild(row);
    });
    if (left) {
      var more = h("tr", null, "more"), td = h("td", "\u2026 " + left.toLocaleString("en") + " more rows (filter to narrow) ");
      td.colSpan = T.heads.length;
      var all = h("button", "show all");
      all.type = "button";
      all.onclick = function (ev) { ev.stopPropagation(); T.limit = Infinity; fill(id); };
      td.appendChild(all); more.appendChild(td); body.appendChild(more);
    }
  }
  function sortBy(id, c, numeric, th) {
    var T = TABLES[id], t = $(id), desc = th.classList.contains("asc");
    t.querySelectorAll("th").forEach(function (x) { x.classList.remove("asc", "desc"); });
    th.classList.add(desc ? "desc" : "asc");
    T.rows.sort(function (a, b) {
      var x = a.v[c], y = b.v[c], r;
      if (numeric) r = (x === "" ? -Infinity : +x) - (y === "" ? -Infinity : +y);
      else r = x < y ? -1 : x > y ? 1 : 0;
      return desc ? -r : r;
    });
    fill(id);
  }
  document.querySelectorAll("input.filter").forEach(function (inp) {
    inp.oninput = function () { TABLES[inp.dataset.table].query = inp.value.toLowerCase(); fill(inp.dataset.table); };
  });

  var heads = [["id"], ["nodes", 1], ["ops"], ["FLOPs", 1], ["bytes in", 1], ["bytes out", 1], ["est. speedup", 1]];
  if (D.validated) heads = heads.concat([["status"], ["measured", 1], ["max abs error", 1], ["native ms", 1], ["XLA ms", 1]]);
  table("clusters", heads, D.clusters.map(function (c, k) {
    var cells = [[c.id, k], [String(c.members.length), c.members.length], [c.ops, c.ops], [fmtCount(c.flops), c.flops],
                 [fmtBytes(c.bin), c.bin], [fmtBytes(c.bout), c.bout], [fmtX(c.s), c.s]];
    if (D.validated) {
      var v = c.v || { status: "not run" };
      cells = cells.concat([[v.status, v.status, v.status === "ok" ? "" : "bad"], [fmtX(v.speedup), v.speedup],
                            [fmtNum(v.err), v.err], [fmtNum(v.native_ms), v.native_ms], [fmtNum(v.xla_ms), v.xla_ms]]);
    }
    return { key: c.id, cells: cells, swatch: c.color, click: function () { selectCluster(k); } };
  }));
  var fallback = [];
  D.nodes.forEach(function (n, i) { if (n.g < 0) fallback.push(i); });
  table("fallback", [["node"], ["op"], ["code"], ["reason"], ["device"]], fallback.map(function (i) {
    var n = D.nodes[i];
    return { key: n.name, cells: [[n.name, n.name], [n.t, n.t], [n.c, n.c], [n.r, n.r], [n.d, n.d]],
             click: function () { selectNode(i); } };
  }));

  /* ---- control-flow bodies: each Loop/If/Scan body's clusters and fallbacks (the picture frames them) ---- */
  var bodyNodes = Object.keys(D.bodies || {});
  if (bodyNodes.length) {
    $("bodies").appendChild(h("h2", "Control-flow bodies"));
    bodyNodes.forEach(function (name) {
      $("bodies").appendChild(h("pre", D.bodies[name].join("\n"), "body"));
      ((D.body_pictures || {})[name] || []).forEach(function (src) {
        /* always a data: URI of the page's own data (the CSP allows img-src data: only): nothing is fetched */
        var img = h("img", null, "body-picture");
        img.setAttribute("src", src); img.setAttribute("alt", "body of " + name); $("bodies").appendChild(img);
      });
    });
  }

  /* ---- the picture ---- */
  XC.draw(D);
  var expanded = {};
  function memberIds(k) { return D.clusters[k].members.map(function (i) { return "n" + i; }); }

  function scoped() { return window.XS && XS.active(); }   // the scope view (scopes.js) is showing

  function selectCluster(k) {
    if (scoped()) { XS.revealCluster(k); showCluster(k); return; }
    var ids = new Set(D.collapsed ? ["g" + k] : memberIds(k));
    if (D.collapsed && expanded[k]) memberIds(k).forEach(function (id) { ids.add(id); });
    XC.highlight(ids, function (e) { return ids.has(e.s) || ids.has(e.t); });
    showCluster(k);
  }

  function showCluster(k) {
    var c = D.clusters[k], box = $("details");
    box.innerHTML = "";
    box.appendChild(h("h3", c.id));
    box.appendChild(h("p", c.members.length + " ops \u00b7 est. " + fmtX(c.s) + " \u00b7 in " + fmtBytes(c.bin) +
                           " \u00b7 out " + fmtBytes(c.bout)));
    if (c.v) box.appendChild(h("p", "validation: " + c.v.status + ", measured " + fmtX(c.v.speedup) +
                                    ", max abs error " + fmtNum(c.v.err) + (c.v.message ? " \u2014 " + c.v.message : "")));
    list(box, "members", c.members.map(function (i) { return D.nodes[i].name + ": " + D.nodes[i].t; }));
  }

  function list(box, title, items) {
    if (!items.length) return;
    box.appendChild(h("b", title + " (" + items.length + ")"));
    var ul = h("ul");
    items.forEach(function (x) { ul.appendChild(h("li", x)); });
    box.appendChild(ul);
  }

  // from a table row the picture moves to the node; a click in the picture leaves the view where it is
  function selectNode(i, inPicture) {
    var n = D.nodes[i], box = $("details");
    XC.clear();
    var id = XC.el["n" + i] ? "n" + i : "g" + n.g;
    if (scoped()) { if (!inPicture) XS.reveal(i); }
    else if (XC.el[id]) { XC.el[id].classList.add("sel"); if (!inPicture) XC.center(id); }
    box.innerHTML = "";
    box.appendChild(h("h3", n.name));
    box.appendChild(h("p", n.t + (n.op !== n.t ? " (" + n.op + ")" : "") + " \u00b7 " + n.d));
    box.appendChild(n.g >= 0 ? h("p", "in " + D.clusters[n.g].id, "ok") : h("p", "fallback [" + n.c + "]: " + n.r, "no"));
    list(box, "inputs", typed(n["in"]));
    list(box, "outputs", typed(n.out));
    list(box, "parameters", n.params);
    /* `_`-prefixed attributes are xcviz's own bookkeeping (_n_inputs, _outer), not the model's */
    list(box, "attributes", n.attrs.filter(function (a) { return String(a[0]).charAt(0) !== "_"; })
                                 .map(function (a) { return a[0] + " = " + a[1]; }));
    box.appendChild(h("b", "story"));
    var story = h("div", null, "story");
    storyLines(i).forEach(function (l) { story.appendChild(h("div", l[0], l[1])); });
    if (D.bodies && D.bodies[n.name]) box.appendChild(h("pre", D.bodies[n.name].join("\n"), "body"));
    box.appendChild(story);
  }

  /* ---- the clustering's decisions, replayed as `xcviz explain` does (clustering/explain.py) ---- */
  function replay(limit, visit) {
    var parent = [], members = {};
    for (var v = 0; v < D.nodes.length; v++) parent.push(v);
    function find(x) { while (parent[x] !== x) { parent[x] = parent[parent[x]]; x = parent[x]; } return x; }
    for (var k = 0; k < limit; k++) {
      var a = D.attempts[k], ra = find(a[0]), rb = find(a[1]);
      if (visit) visit(k, a, ra, rb, find, members);
      if (a[2] && ra !== rb) {
        parent[rb] = ra;
        members[ra] = (members[ra] || [ra]).concat(members[rb] || [rb]);
        delete members[rb];
      }
    }
    return { find: find, members: members };
  }
  function sorted(ms) { return ms.slice().sort(function (a, b) { return a - b; }); }
  function group(ids) {
    var names = ids.map(function (v) { return D.nodes[v].name; });
    if (names.length === 1) return names[0];
    if (names.length <= 4) return "{" + names.join(", ") + "}";
    return "{" + names.slice(0, 3).join(", ") + ", ... " + (names.length - 3) + " more}";
  }
  function phaseName(p) { return D.phases[String(p)] || String(p); }

  function storyLines(i) {
    var n = D.nodes[i], out = [];
    out.push(n.cand ? ["candidate: yes"] : ["candidate: no, " + n.r, "no"]);
    if (D.attempts === null) {
      out.push(["(too many merge attempts to store: run `xcviz explain GRAPH " + n.name + "`)"]);
    } else {
      var steps = [];
      replay(D.attempts.length, function (k, a, ra, rb, find, members) {
        var f = find(i);
        if (f !== ra && f !== rb) return;
        var p = group(sorted(members[ra] || [ra])), c = group(sorted(members[rb] || [rb])), ph = phaseName(a[3]);
        steps.push(a[2] ? ["\u2713 " + ph + ": merged " + p + " -> " + c, "ok"]
                        : ["\u2717 " + ph + ": refused " + p + " -> " + c + ": " + D.reasons[a[4]], "no"]);
      });
      if (steps.length) out.push(["merges tried (" + steps.length + "):"]);
      else if (n.cand) out.push(["merges tried: none (no neighbouring candidate)"]);
      out = out.concat(steps);
    }
    if (n.g >= 0) {
      var c = D.clusters[n.g];
      out.push(["result: in " + c.id + " with " + c.members.length + " nodes", "ok"]);
    } else out.push(["result: falls back, " + n.r, "no"]);
    return out;
  }

  /* ---- collapsed clusters expand on click ---- */
  function toggle(k) {
    var inner = D.inner[String(k)], g = XC.itemById["g" + k];
    if (!inner) { $("decision").textContent = D.clusters[k].id + " is too large to draw expanded here: its members are " +
                  "listed on the right; `xcviz render --expand` draws every node"; return; }
    if (expanded[k]) {
      expanded[k].remove(); delete expanded[k];
      memberIds(k).forEach(function (id) { delete XC.el[id]; delete XC.itemById[id]; });
      return;
    }
    var dx = g.box[0] - inner.w / 2, dy = g.box[1] - inner.h / 2, c = D.clusters[k].color;
    var layer = XC.make("g", { "class": "inner" }, XC.layers.overlay);
    var bg = XC.make("rect", { "class": "inner-bg", x: dx, y: dy, width: inner.w, height: inner.h, rx: 8, stroke: c,
                               "data-cluster": k }, layer);
    XC.make("title", {}, bg).textContent = D.clusters[k].id + ": click the frame to collapse";
    inner.edges.forEach(function (e) { XC.drawEdge(e, layer, dx, dy); });
    inner.items.forEach(function (it) {
      XC.drawItem(it, layer, dx, dy);
      XC.itemById[it.id] = { id: it.id, box: [it.box[0] + dx, it.box[1] + dy, it.box[2], it.box[3]] };
    });
    expanded[k] = layer;
    XC.showBox(dx, dy, inner.w, inner.h);
  }

  $("graph").addEventListener("click", function (ev) {
    if (XC.dragged) return;
    if (ev.target.classList.contains("inner-bg")) { toggle(+ev.target.dataset.cluster); return; }
    var g = ev.target.closest(".item");
    if (!g) return;
    var id = g.dataset.id;
    if (id.charAt(0) === "n") selectNode(+id.slice(1), true);
    else if (id.charAt(0) === "g") { selectCluster(+id.slice(1)); toggle(+id.slice(1)); }
    else {   // a graph input or output: its name and type
      var box = $("details"); box.innerHTML = ""; XC.clear(); g.classList.add("sel");
      box.appendChild(h("h3", XC.itemById[id].lines[0]));
      box.appendChild(h("p", (id.charAt(0) === "i" ? "graph input " : "graph output ") + XC.itemById[id].lines.slice(1).join(" ")));
    }
  });

  /* ---- the formation replay: frame f applies the merges up to its attempt; positions never move ---- */
  var frame = 0, timer = null, F = D.frames || [];
  function finalHulls() {
    if (D.collapsed) return;
    D.clusters.forEach(function (c) { XC.hull(memberIds(D.clusters.indexOf(c)), c.color, c.id); });
  }
  function showFrame(f) {
    frame = Math.max(0, Math.min(F.length - 1, f));
    $("slider").value = frame;
    var fr = F[frame], svg = $("graph");
    XC.layers.hulls.innerHTML = "";
    svg.querySelectorAll(".refused-line").forEach(function (el) { el.remove(); });
    svg.querySelectorAll(".refused, .onpath").forEach(function (el) { el.classList.remove("refused", "onpath"); });
    $("frame-counter").textContent = "frame " + (frame + 1) + " / " + F.length;
    var lines = fr.refused.map(function (k) {
      var a = D.attempts[k];
      return phaseName(a[3]) + ": refused " + D.nodes[a[0]].name + " \u2192 " + D.nodes[a[1]].name + ": " + D.reasons[a[4]];
    });
    $("decision").textContent = lines.concat([fr.text]).join("\n");
    fr.refused.forEach(markRefused);
    if (fr.a === null) { svg.classList.remove("replay"); finalHulls(); return; }
    svg.classList.add("replay");
    var st = replay(fr.a + 1), now = st.find(D.attempts[fr.a][1]);
    Object.keys(st.members).forEach(function (r) {
      var ms = sorted(st.members[r]), k = D.nodes[ms[0]].g;
      var colour = k >= 0 ? D.clusters[k].color : "#999999";
      var fate = k >= 0 ? "\u2192 " + D.clusters[k].id : "\u2192 dropped (below min size)";
      XC.hull(ms.map(function (v) { return "n" + v; }), colour, ms.length + " ops " + fate, +r === now ? "new" : "");
    });
    var at = D.attempts[fr.a];   // the two nodes of this frame's merge, kept in view as the replay advances
    XC.panTo(["n" + at[0], "n" + at[1]]);
  }
  // a refused merge: the edges between the two groups red, and the blocking path (its nodes and the edges that
  // run from the producer side through it to the consumer side), with the groups as they were at that attempt
  function markRefused(k) {
    var a = D.attempts[k], st = replay(k), ra = st.find(a[0]), rb = st.find(a[1]);
    var P = new Set((st.members[ra] || [ra]).map(function (v) { return "n" + v; }));
    var C = new Set((st.members[rb] || [rb]).map(function (v) { return "n" + v; }));
    var path = new Set(a[5].map(function (v) { return "n" + v; })), found = false;
    path.forEach(function (id) { if (XC.el[id]) XC.el[id].classList.add("onpath"); });
    XC.edgeEls.forEach(function (x) {
      var s = x.e.s, t = x.e.t;
      var direct = P.has(s) && C.has(t), via = (P.has(s) || path.has(s)) && (path.has(t) || C.has(t)) && (path.has(s) || path.has(t));
      if (direct || via) x.g.classList.add("refused");
      found = found || direct;
    });
    var p = XC.itemById["n" + a[0]], q = XC.itemById["n" + a[1]];
    if (!found && p && q) XC.make("line", { "class": "refused-line", x1: p.box[0], y1: p.box[1], x2: q.box[0], y2: q.box[1] },
                                 XC.layers.overlay);
  }
  function stop() { clearInterval(timer); timer = null; $("play").textContent = "play"; }
  if (F.length) {
    $("slider").max = F.length - 1;
    $("slider").oninput = function () { stop(); showFrame(+$("slider").value); };
    $("prev").onclick = function () { stop(); showFrame(frame - 1); };
    $("next").onclick = function () { stop(); showFrame(frame + 1); };
    $("play").onclick = function () {
      if (timer) { stop(); return; }
      if (frame === F.length - 1) showFrame(0);
      $("play").textContent = "pause";
      timer = setInterval(function () { if (frame >= F.length - 1) stop(); else showFrame(frame + 1); }, 1200);
    };
    showFrame(F.length - 1);
  } else {
    $("replay").style.display = "none";
    $("decision").textContent = D.collapsed ? "collapsed: one box per cluster; click a cluster to expand it " +
      "(the formation replay needs the expanded view: --expand)" : "no merge attempts to replay";
    finalHulls();
  }

  /* ---- toolbar and keys ---- */
  $("search").oninput = function () {
    var hits = scoped() ? XS.search($("search").value) : XC.search($("search").value);
    $("search-count").textContent = $("search").value ? hits.length + " match" + (hits.length === 1 ? "" : "es") : "";
  };
  $("fit").onclick = function () { if (!scoped()) XC.fit(); };
  $("zoom-in").onclick = function () { if (!scoped()) XC.zoom(0.8); };
  $("zoom-out").onclick = function () { if (!scoped()) XC.zoom(1.25); };
  function clearAll() { XC.clear(); $("details").innerHTML = ""; $("search").value = ""; $("search-count").textContent = ""; }
  $("clear").onclick = clearAll;
  document.addEventListener("keydown", function (e) {
    if (e.target.tagName === "INPUT" && e.target.type !== "range") return;
    if (e.key === "Escape") clearAll();
    else if (e.key === "f") (scoped() ? XS.fit : XC.fit)();
    else if (e.key === "+" || e.key === "=") (scoped() ? XS.zoom : XC.zoom)(0.8);
    else if (e.key === "-") (scoped() ? XS.zoom : XC.zoom)(1.25);
    else if (e.key === "ArrowLeft" && F.length) { stop(); showFrame(frame - 1); }
    else if (e.key === "ArrowRight" && F.length) { stop(); showFrame(frame + 1); }
  });
  window.XCREPORT = { data: D, selectCluster: selectCluster, selectNode: selectNode, showFrame: showFrame,
                      frame: function () { return frame; }, storyLines: storyLines };
})();
