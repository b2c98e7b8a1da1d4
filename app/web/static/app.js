// Draws every plot a page embeds (<script type="application/json" data-plot-for=ID>) with uPlot,
// again after htmx swaps new content in, and on resize.  The table beside each plot is its text form.
(function () {
  "use strict";
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                   "#17becf", "#7f7f7f", "#bcbd22"];
  const plots = new Map();

  function aligned(spec) {
    // uPlot's x array is shared by all series: every point of every series in x order (repeats kept,
    // so a sweep's many runs at one x all show), each series holding its own y there and null elsewhere
    const points = [];
    spec.series.forEach((s, k) => s.x.forEach((v, i) => { if (v !== null) points.push([v, k, s.y[i]]); }));
    points.sort((a, b) => a[0] - b[0]);
    const data = [points.map((p) => p[0])];
    spec.series.forEach(() => data.push(new Array(points.length).fill(null)));
    points.forEach((p, i) => { data[p[1] + 1][i] = p[2]; });
    return data;
  }

  function seriesOptions(spec) {
    // one colour per key: a group's splits and its law's curve share it; fit points are filled,
    // validation and test points hollow, test points larger
    const colours = new Map();
    return spec.series.map((s) => {
      if (!colours.has(s.key)) colours.set(s.key, PALETTE[colours.size % PALETTE.length]);
      const colour = colours.get(s.key);
      if (s.style === "line" || s.style === "band") {
        return { label: s.label, stroke: colour, width: s.style === "band" ? 1 : 2, spanGaps: true,
                 dash: s.style === "band" ? [5, 4] : undefined, points: { show: false } };
      }
      const split = s.label.split(": ").pop();
      const hollow = split === "validation" || split === "test";
      return { label: s.label, stroke: colour, width: 1, paths: () => null, spanGaps: false,
               points: { show: true, size: split === "test" ? 8 : 6, width: 1.5, fill: hollow ? "#fff" : colour } };
    });
  }

  function draw(script) {
    const id = script.getAttribute("data-plot-for");
    const el = document.getElementById(id);
    if (!el || typeof uPlot === "undefined") return;
    const spec = JSON.parse(script.textContent);
    const old = plots.get(id);
    if (old) old.destroy();
    el.textContent = "";
    const opts = {
      width: Math.max(el.clientWidth, 280), height: el.clientWidth < 500 ? 260 : 360,
      scales: { x: { time: false, distr: spec.log_x ? 3 : 1 }, y: { distr: spec.log_y ? 3 : 1 } },
      axes: [{ label: spec.x_label }, { label: spec.y_label }],
      series: [{ label: spec.x_label }].concat(seriesOptions(spec)),
      legend: { live: false },
    };
    plots.set(id, new uPlot(opts, aligned(spec), el));
  }

  function drawAll(root) {
    (root || document).querySelectorAll("script[data-plot-for]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", () => drawAll(document));
  document.addEventListener("htmx:afterSettle", (e) => drawAll(e.target));
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => drawAll(document), 150);
  });
})();
