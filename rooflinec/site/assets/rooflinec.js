/* rooflinec: replace each chart's static SVG by the live Vega chart.
 * The runtime (vega-bundle.js, beside this file) is loaded only on pages with a chart.
 * Chart specs are inline JSON (<script type="application/json">); nothing is fetched
 * from another host. Without JavaScript, or if anything fails, the static SVG stays. */
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

  function render(view) {
    var data = document.getElementById(view.getAttribute("data-spec"));
    if (!data) { return; }
    var spec = JSON.parse(data.textContent);
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
    var views = document.querySelectorAll(".rooflinec-chart-view[data-spec]");
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
