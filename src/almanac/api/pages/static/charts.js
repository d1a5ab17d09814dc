// Almanac's charts, drawn by uPlot (static/uplot) from the JSON of a data route named in each
// `.chart-canvas[data-src]` (the answer's field `data-part`, its figure `data-figure`). A series
// chart (kind "value" or "event") or counts per day or hour (`x` and `lines`). The page's
// table says the same figures without the drawing.
(function () {
  "use strict";
  if (!window.uPlot) return;
  var DAY = 86400;
  var INK = "#1f3b57", LIGHT = "#8aa1b5", TODAY = "#b3261e";
  var PALETTE = ["#1f3b57", "#b3261e", "#2e7d32", "#8a5a00", "#6a1b9a", "#00695c"];
  // A run's outcome keeps its colour in every figure: success green, failure red.
  var OUTCOME = { success: "#2e7d32", failure: "#b3261e" };
  // Counts step by whole numbers: no axis says half a run.
  var WHOLE = [1, 2, 5].reduce(function (all, m) {
    for (var p = 1; p <= 1e9; p *= 10) all.push(m * p);
    return all;
  }, []).sort(function (a, b) { return a - b; });

  function seconds(day) {
    return Date.parse(day.length === 10 ? day + "T00:00:00Z" : day) / 1000;
  }

  function todayLine(when) {
    return function (u) {
      var x = u.valToPos(when, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      var ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = TODAY;
      ctx.lineWidth = 2;
      ctx.setLineDash([]);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillStyle = TODAY;
      ctx.font = 12 * devicePixelRatio + "px sans-serif";
      ctx.fillText("Today", x + 4, u.bbox.top + 14 * devicePixelRatio);
      ctx.restore();
    };
  }

  function only(indexes) {
    return function () { return indexes; };
  }

  function valueChart(c) {
    var xs = [], drawn = [], carried = [], records = [];
    c.points.forEach(function (p, i) {
      xs.push(seconds(p.date));
      var isRecord = p.style === "normal";
      drawn.push(isRecord ? p.value : null);
      // A value in force is drawn lighter from the record it carries, never as a new point.
      var next = c.points[i + 1];
      carried.push(p.style && (!isRecord || (next && next.style && next.style !== "normal")) ? p.value : null);
      if (isRecord) records.push(i);
    });
    return {
      data: [xs, drawn, carried],
      series: [
        {},
        { label: c.field_label, stroke: INK, width: 2, spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }),
          points: { show: true, size: 5, fill: INK, filter: only(records) } },
        { label: "In force", stroke: LIGHT, width: 2, dash: [6, 4], paths: uPlot.paths.stepped({ align: 1 }),
          points: { show: false } },
      ],
      label: c.unit_words ? c.field_label + " (" + c.unit_words + ")" : c.field_label,
    };
  }

  function eventChart(c) {
    var days = {}, level = c.start ? c.start.value : null;
    if (c.start) days[c.first] = { level: level, happened: null, scheduled: null };
    c.marks.forEach(function (m) {
      var entry = days[m.date] || (days[m.date] = { level: null, happened: null, scheduled: null });
      if (m.state === "happened" && m.value !== null) entry.happened = m.value;
      if (m.state === "scheduled") entry.scheduled = true;
    });
    if (!days[c.today]) days[c.today] = { level: null, happened: null, scheduled: null };
    var keys = Object.keys(days).sort();
    var xs = [], steps = [], happened = [], scheduled = [];
    keys.forEach(function (day) {
      var entry = days[day];
      if (entry.happened !== null) level = entry.happened;
      xs.push(seconds(day));
      steps.push(day <= c.today ? level : null);
      happened.push(entry.happened);
      scheduled.push(entry.scheduled ? level : null);
    });
    return {
      data: [xs, steps, happened, scheduled],
      series: [
        {},
        { label: c.name, stroke: INK, width: 2, spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }),
          points: { show: false } },
        { label: "Happened", stroke: INK, width: 0, points: { show: true, size: 7, fill: INK } },
        { label: "Scheduled", stroke: LIGHT, width: 0, points: { show: true, size: 9, fill: "#fff" } },
      ],
      label: c.unit_words ? c.name + " (" + c.unit_words + ")" : c.name,
    };
  }

  function countsChart(c) {
    // Counts per day or hour hold from one key to the next (a step); counts per run or check
    // are moments of their own, drawn as points with nothing between them.
    var perKey = c.x_kind !== "moment";
    var xs = c.x.map(seconds), values = c.lines.map(function (l) { return l.values.slice(); });
    if (perKey && xs.length) {
      // The last day or hour holds its count to its end, as every other one does.
      xs.push(xs[xs.length - 1] + (c.x_kind === "hour" ? 3600 : DAY));
      values.forEach(function (v) { v.push(v[v.length - 1]); });
    } else if (xs.length && xs[0] === xs[xs.length - 1]) {
      // Moments all at one time get an hour either side rather than years of empty axis.
      xs = [xs[0] - 3600].concat(xs, [xs[0] + 3600]);
      values = values.map(function (v) { return [null].concat(v, [null]); });
    }
    var whole = c.lines.every(function (l) {
      return l.values.every(function (v) { return v === null || v === Math.floor(v); });
    });
    return {
      data: [xs].concat(values),
      series: [{}].concat(c.lines.map(function (l, i) {
        var colour = OUTCOME[l.label] || PALETTE[i % PALETTE.length];
        // A step has nothing to hold to beside an hour or day with nothing counted (a wait
        // of one hour alone): such lines mark each value with a point as well.
        var gaps = l.values.some(function (v) { return v === null; });
        return perKey
          ? { label: l.label, stroke: colour, width: 2, paths: uPlot.paths.stepped({ align: 1 }),
              points: { show: gaps, size: 7, fill: colour } }
          : { label: l.label, stroke: colour, width: 0, points: { show: true, size: 7, fill: colour } };
      })),
      label: c.label,
      legend: c.lines.length > 1,
      incrs: whole ? WHOLE : undefined,
    };
  }

  function draw(box, c) {
    var made = c.kind === "value" ? valueChart(c) : c.kind === "event" ? eventChart(c) : countsChart(c);
    var hooks = c.today ? { draw: [todayLine(seconds(c.today))] } : {};
    var options = {
      width: Math.max(box.clientWidth, 280),
      height: box.clientWidth < 500 ? 220 : 320,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },
      legend: { show: !!made.legend, live: false },
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [
        { stroke: "#333", grid: { stroke: "#eee" } },
        { stroke: "#333", grid: { stroke: "#eee" }, label: made.label, size: 60 },
      ],
      series: made.series,
      hooks: hooks,
    };
    if (made.incrs) options.axes[1].incrs = made.incrs;
    box.textContent = "";
    var plot = new uPlot(options, made.data, box);
    box.setAttribute("data-drawn", String(made.data[0].length));
    window.addEventListener("resize", function () {
      plot.setSize({ width: Math.max(box.clientWidth, 280), height: options.height });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll(".chart-canvas[data-src]"), function (box) {
    fetch(box.getAttribute("data-src"), { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (answer) {
        if (!answer.ok) throw new Error(answer.status);
        return answer.json();
      })
      .then(function (c) {
        var key = box.getAttribute("data-figure"), part = box.getAttribute("data-part");
        if (part) c = c[part];
        if (key) c = c.figures.filter(function (f) { return f.key === key; })[0];
        draw(box, c);
      })
      .catch(function () {
        box.textContent = "The chart could not be drawn; the table below has the same figures.";
        box.setAttribute("data-drawn", "failed");
      });
  });
})();
