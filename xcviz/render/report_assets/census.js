/* xcviz census page: sortable tables (click a heading) and filters; the tables themselves are static HTML. */
(function () {
  document.querySelectorAll("table.sortable").forEach(function (t) {
    t.querySelectorAll("th").forEach(function (th, c) {
      th.onclick = function () {
        var desc = th.classList.contains("asc"), numeric = th.dataset.num === "1";
        t.querySelectorAll("th").forEach(function (x) { x.classList.remove("asc", "desc"); });
        th.classList.add(desc ? "desc" : "asc");
        var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[c].dataset.v, y = b.cells[c].dataset.v, r;
          if (numeric) r = (x === "" ? -Infinity : +x) - (y === "" ? -Infinity : +y);
          else r = x < y ? -1 : x > y ? 1 : 0;
          return desc ? -r : r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      };
    });
  });
  document.querySelectorAll("input.filter").forEach(function (inp) {
    inp.oninput = function () {
      var q = inp.value.toLowerCase();
      document.getElementById(inp.dataset.table).querySelectorAll("tbody tr").forEach(function (tr) {
        tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
      });
    };
  });
})();
