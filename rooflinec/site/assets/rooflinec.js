/* rooflinec: replace each chart's static SVG by the live Vega chart.
 * The runtime (vega-bundle.js, beside this file) is loaded only on pages with a chart.
 * A chart's spec is the `.vl.json` beside its page (its download); nothing is fetched
 * from another host. Without JavaScript, or if anything fails (a page opened from disk),
 * the static SVG stays. */
(function () {
  "use strict";
  var self = document.currentScript;
  var base = self && self.src ? self.src.replace(/[^\/]*$/, "") : "";

  function loadRuntime(done) {
    if (window.vegaEmbed) { done(); return; }
    var script = document.createElement("script");
    script.src = base + "vega-bundle.js";
    script.onload = done;
    document.head.appendChild(script);
  }

  function specOf(view) {
    return fetch(view.getAttribute("data-src")).then(function (response) {
      if (!response.ok) { throw new Error(response.statusText); }
      return response.json();
    });
  }

  function render(view) {
    specOf(view).then(function (spec) { draw(view, spec); }, function () {});
  }

  function draw(view, spec) {
    var live = document.createElement("div");
    live.className = "rooflinec-live";
    live.style.display = "none";
    view.appendChild(live);
    window.vegaEmbed(live, spec, { actions: false, renderer: "svg" }).then(function () {
      var still = view.querySelector(".rooflinec-chart-static");
      if (still) { still.remove(); }
      live.style.display = "";
      view.classList.add("rooflinec-chart-live");
    }, function () {
      live.remove();
    });
  }

  function start() {
    var views = document.querySelectorAll(".rooflinec-chart-view[data-src]");
    if (!views.length) { return; }
    loadRuntime(function () {
      Array.prototype.forEach.call(views, render);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

/* rooflinec: table tools. Each table inside `.rooflinec-table` gets a search box, a
 * select for each of its vendor, family, form, model and phase columns, and a sort button in every
 * column heading. The rows are all in the page already: this only hides and reorders
 * them, so without JavaScript the whole table is still there, in its printed order.
 * Cells are sorted by the number they start with, SI prefix applied ("1.6 TB/s",
 * "989.4 TFLOP/s", "3 of 10"), else by their text; empty cells ("–") go last. */
(function () {
  "use strict";
  var FILTERS = ["vendor", "family", "form", "model", "phase"];
  var PREFIX = { p: 1e-12, n: 1e-9, "µ": 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
  var NUMBER = /^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?:\s*([pnµmkMGTPE])(?=[A-Za-z]))?/;
  var EMPTY = { "": true, "–": true, "-": true, "no peak": true };

  function text(cell) {
    return (cell ? cell.textContent : "").replace(/\s+/g, " ").trim();
  }

  function sortKey(cell) {
    var t = text(cell);
    if (EMPTY[t]) { return null; }
    var m = NUMBER.exec(t);
    if (m) { return parseFloat(m[1]) * (m[2] ? PREFIX[m[2]] : 1); }
    return t.toLowerCase();
  }

  function compare(a, b) {
    if (a === null || b === null) { return a === b ? 0 : (a === null ? 1 : -1); }
    if (typeof a !== typeof b) { return typeof a === "number" ? -1 : 1; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }

  function element(tag, props) {
    var el = document.createElement(tag);
    Object.keys(props || {}).forEach(function (k) { el[k] = props[k]; });
    return el;
  }

  function enhance(wrapper, index) {
    var table = wrapper.querySelector("table");
    if (!table || !table.tHead || !table.tBodies.length) { return; }
    var body = table.tBodies[0];
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var rows = Array.prototype.slice.call(body.rows);
    var tools = element("div", { className: "rooflinec-tools" });
    var search = element("input", { type: "search", placeholder: "Search this table" });
    search.setAttribute("aria-label", "Search this table");
    tools.appendChild(search);
    var selects = [];
    heads.forEach(function (th, col) {
      var name = text(th).toLowerCase();
      if (FILTERS.indexOf(name) < 0) { return; }
      var values = {};
      rows.forEach(function (tr) { values[text(tr.cells[col])] = true; });
      var names = Object.keys(values).sort(function (a, b) { return a.localeCompare(b); });
      if (names.length < 2) { return; }
      var select = element("select", { name: "rooflinec-" + name + "-" + index });
      select.setAttribute("aria-label", "Show one " + name);
      select.setAttribute("data-column", name);
      select.appendChild(element("option", { value: "", textContent: "every " + name }));
      names.forEach(function (v) { select.appendChild(element("option", { value: v, textContent: v })); });
      select.addEventListener("change", apply);
      selects.push({ col: col, select: select });
      tools.appendChild(select);
    });
    var count = element("span", { className: "rooflinec-count" });
    count.setAttribute("aria-live", "polite");
    tools.appendChild(count);
    wrapper.insertBefore(tools, wrapper.firstChild);
    search.addEventListener("input", apply);

    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (tr) {
        var hay = text(tr).toLowerCase();
        var ok = words.every(function (w) { return hay.indexOf(w) >= 0; }) &&
          selects.every(function (s) { return !s.select.value || text(tr.cells[s.col]) === s.select.value; });
        tr.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = shown === rows.length ? rows.length + " rows" : shown + " of " + rows.length + " rows";
    }

    heads.forEach(function (th, col) {
      var button = element("button", { type: "button", className: "rooflinec-sort", textContent: "↕" });
      button.setAttribute("aria-label", "Sort by " + text(th));
      button.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") === "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        heads.forEach(function (h) {
          var b = h.querySelector(".rooflinec-sort");
          if (b) { b.textContent = h === th ? (descending ? "↓" : "↑") : "↕"; }
        });
        var keyed = rows.map(function (tr, i) { return { tr: tr, key: sortKey(tr.cells[col]), i: i }; });
        keyed.sort(function (a, b) {
          var c = compare(a.key, b.key);
          if (descending && a.key !== null && b.key !== null) { c = -c; }
          return c || a.i - b.i;
        });
        keyed.forEach(function (k) { body.appendChild(k.tr); });
      });
      th.appendChild(button);
    });
    wrapper.classList.add("rooflinec-table-live");
    apply();
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".rooflinec-table"), enhance);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
