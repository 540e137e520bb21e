// The report's explorer: filters on every field of the runs' key, a sortable table, a chart of any measure (uPlot) and the
// difference between two values of one field (two RunAlls, 1 vs 16 clients, plaintext vs TLS) with its interval and verdict.
// Reads the data the report embedded (#explorer-data); asks nothing of the network.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("explorer-data").textContent);
  var root = document.getElementById("explorer");
  var measures = [
    { id: "mean", name: "Time (s)", digits: 3, lowerBetter: true },
    { id: "recordsPerSecond", name: "Records/s", digits: 0 },
    { id: "mbPerSecond", name: "MB/s on the wire", digits: 2 },
    { id: "pairedRatio", name: "Paired × reference", digits: 3, lowerBetter: true },
    { id: "ratioOfMeans", name: "× reference (ratio of means)", digits: 3, lowerBetter: true },
    { id: "p50", name: "Batch latency p50 (ms)", digits: 2, lowerBetter: true },
    { id: "p90", name: "Batch latency p90 (ms)", digits: 2, lowerBetter: true },
    { id: "p99", name: "Batch latency p99 (ms)", digits: 2, lowerBetter: true },
    { id: "clientPeakMB", name: "Client peak memory (MB)", digits: 0, lowerBetter: true },
    { id: "clientAllocatedMB", name: "Client MB allocated / run", digits: 1, lowerBetter: true },
    { id: "clientGcPauseMs", name: "Client GC pause (ms / run)", digits: 1, lowerBetter: true }
  ];
  var fields = data.fields;
  var state = { filters: {}, sort: { column: "mean", descending: false }, metric: "mean", scale: "linear", view: "bars" };
  var chart = null;

  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    (children || []).forEach(function (child) { node.appendChild(typeof child === "string" ? document.createTextNode(child) : child); });
    return node;
  }

  function values(field) {
    var seen = {};
    data.rows.forEach(function (row) { seen[row.key[field]] = true; });
    return Object.keys(seen).sort(function (a, b) {
      var x = Number(a), y = Number(b);
      return a !== "" && b !== "" && !isNaN(x) && !isNaN(y) ? x - y : a.localeCompare(b);
    });
  }

  function format(value, digits) {
    if (value === null || value === undefined || isNaN(value)) return "–";
    return Number(value).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }

  // The rows the filters let through; a field named in except is not filtered (the field two values of are compared).
  function selected(except) {
    return data.rows.filter(function (row) {
      return fields.every(function (field) {
        if (field === except) return true;
        var chosen = state.filters[field];
        return !chosen || chosen.length === 0 || chosen.indexOf(row.key[field]) >= 0;
      });
    });
  }

  // Fields whose value differs between the rows shown: what names a row.
  function varying(rows) {
    return fields.filter(function (field) {
      return rows.some(function (row) { return row.key[field] !== rows[0].key[field]; });
    });
  }

  // A row's name: its transport, then the other fields that differ between the rows shown (the kind follows from the transport).
  function label(row, shown) {
    var parts = [row.key.transport].concat(shown.filter(function (field) { return field !== "transport" && field !== "kind"; })
      .map(function (field) { return field === "runAll" ? "RunAll " + row.key.runAll : field + " " + row.key[field]; }));
    return parts.join(", ");
  }

  function buildFilters() {
    var box = root.querySelector("#explorer-filters");
    var initial = data.initial || {};
    fields.forEach(function (field) {
      var options = values(field);
      if (initial[field] && options.length > 1) state.filters[field] = initial[field];
      var select = el("select", { id: "filter-" + field, multiple: "multiple", size: String(Math.min(4, Math.max(2, options.length))), "data-field": field },
        options.map(function (value) {
          var option = el("option", { value: value }, [value === "" ? "(none)" : value]);
          option.selected = (state.filters[field] || []).indexOf(value) >= 0;
          return option;
        }));
      if (options.length < 2) select.disabled = true;
      select.addEventListener("change", function () {
        state.filters[field] = Array.prototype.filter.call(select.options, function (o) { return o.selected; }).map(function (o) { return o.value; });
        render();
      });
      box.appendChild(el("label", { "class": "filter" }, [field, el("br"), select]));
    });
  }

  function buildControls() {
    var metric = root.querySelector("#explorer-metric");
    measures.forEach(function (m) { metric.appendChild(el("option", { value: m.id }, [m.name])); });
    metric.addEventListener("change", function () { state.metric = metric.value; renderChart(selected()); });
    var scale = root.querySelector("#explorer-scale");
    scale.addEventListener("change", function () { state.scale = scale.value; renderChart(selected()); });
    var view = root.querySelector("#explorer-view");
    view.addEventListener("change", function () { state.view = view.value; renderChart(selected()); });
    var compareField = root.querySelector("#compare-field");
    fields.forEach(function (field) { compareField.appendChild(el("option", { value: field }, [field])); });
    compareField.value = data.runAlls.length > 1 ? "runAll" : "transport";
    compareField.addEventListener("change", fillCompareValues);
    root.querySelector("#compare-a").addEventListener("change", renderCompare);
    root.querySelector("#compare-b").addEventListener("change", renderCompare);
    fillCompareValues();
  }

  function renderTable(rows) {
    var shown = varying(data.rows);
    var columns = shown.map(function (field) { return { id: field, name: field, key: true }; })
      .concat([{ id: "n", name: "Runs", digits: 0 }]).concat(measures);
    var sorted = rows.slice().sort(function (a, b) {
      var column = state.sort.column;
      var x = columnValue(a, column), y = columnValue(b, column);
      var order = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
      return state.sort.descending ? -order : order;
    });
    var table = root.querySelector("#explorer-table");
    table.innerHTML = "";
    table.appendChild(el("thead", {}, [el("tr", {}, columns.map(function (c) {
      var th = el("th", { "data-column": c.id, title: "Sort by " + c.name }, [c.name + (state.sort.column === c.id ? (state.sort.descending ? " ▼" : " ▲") : "")]);
      th.addEventListener("click", function () {
        state.sort = { column: c.id, descending: state.sort.column === c.id ? !state.sort.descending : false };
        renderTable(selected());
      });
      return th;
    }))]));
    table.appendChild(el("tbody", {}, sorted.map(function (row) {
      return el("tr", {}, columns.map(function (c) {
        return el("td", { "data-column": c.id }, [c.key ? row.key[c.id] : format(row[c.id], c.digits)]);
      }));
    })));
    root.querySelector("#explorer-count").textContent = rows.length + " of " + data.rows.length + " rows";
  }

  function columnValue(row, column) {
    if (fields.indexOf(column) >= 0) {
      var text = row.key[column], number = Number(text);
      return text !== "" && !isNaN(number) ? number : text;
    }
    var value = row[column];
    return value === null || value === undefined ? -Infinity : value;
  }

  function renderChart(rows) {
    var box = root.querySelector("#explorer-chart");
    if (chart) { chart.destroy(); chart = null; }
    box.innerHTML = "";
    var measure = measures.filter(function (m) { return m.id === state.metric; })[0];
    var logScale = state.scale === "log";
    var usable = rows.filter(function (row) { return row[measure.id] !== null && row[measure.id] !== undefined && (!logScale || row[measure.id] > 0); });
    root.querySelector("#explorer-chart-note").textContent = usable.length < rows.length
      ? (rows.length - usable.length) + " row(s) have no " + measure.name + (logScale ? " above zero" : "") + " and are not drawn." : "";
    if (usable.length === 0 || typeof uPlot === "undefined") return;
    var width = Math.max(320, Math.min(1060, box.clientWidth || 1000));
    var options, series;
    if (state.view === "history") {
      // One line a row of the current RunAll's key (its run-all field aside), across the RunAlls in the database.
      var runAlls = data.runAlls.map(function (r) { return r.id; });
      var byKey = {};
      usable.forEach(function (row) {
        var key = fields.filter(function (f) { return f !== "runAll"; }).map(function (f) { return row.key[f]; }).join("|");
        (byKey[key] = byKey[key] || { row: row, points: {} }).points[row.key.runAll] = row[measure.id];
      });
      var keys = Object.keys(byKey);
      var lines = keys.slice(0, 12).map(function (k) { return byKey[k]; });
      if (keys.length > 12)
        root.querySelector("#explorer-chart-note").textContent = "The first 12 of " + keys.length + " rows are drawn: filter to see the others.";
      var shown = varying(lines.map(function (l) { return l.row; })).filter(function (f) { return f !== "runAll"; });
      series = [{ label: "RunAll" }].concat(lines.map(function (line, i) {
        return { label: label(line.row, shown), stroke: palette(i), width: 2, points: { show: true } };
      }));
      options = { width: width, height: 320, series: series, scales: { x: { time: false }, y: { distr: logScale ? 3 : 1 } },
        axes: [{ label: "RunAll id", values: function (u, ticks) { return ticks.map(function (t) { return Number.isInteger(t) ? String(runAlls[t] || "") : ""; }); } },
               { label: measure.name, size: 70 }] };
      var x = runAlls.map(function (_, i) { return i; });
      chart = new uPlot(options, [x].concat(lines.map(function (line) {
        return runAlls.map(function (id) { return line.points[id] === undefined ? null : line.points[id]; });
      })), box);
      return;
    }
    var shownFields = varying(usable);
    var ordered = usable.slice().sort(function (a, b) { return a[measure.id] - b[measure.id]; });
    var labels = ordered.map(function (row) { return label(row, shownFields); });
    var bars = uPlot.paths.bars({ size: [0.7, 60] });
    options = { width: width, height: 380,
      series: [{ label: "Row" }, { label: measure.name, fill: "#4a7bd0", stroke: "#4a7bd0", paths: bars, points: { show: false } }],
      scales: { x: { time: false, range: [-0.5, ordered.length - 0.5] }, y: { distr: logScale ? 3 : 1, range: logScale ? undefined : function (u, min, max) { return [0, max * 1.05]; } } },
      axes: [{ label: "", rotate: -30, size: 120, space: 10,
               values: function (u, ticks) { return ticks.map(function (t) { return Number.isInteger(t) && labels[t] ? labels[t].slice(0, 40) : ""; }); } },
             { label: measure.name, size: 70 }],
      legend: { show: true } };
    chart = new uPlot(options, [ordered.map(function (_, i) { return i; }), ordered.map(function (row) { return row[measure.id]; })], box);
  }

  function palette(i) {
    return ["#4a7bd0", "#d0644a", "#4aa36b", "#9a4ad0", "#d0a84a", "#4ac0d0", "#777", "#d04a8e", "#6b8e23", "#8b4513", "#2f4f4f", "#b8860b"][i % 12];
  }

  function fillCompareValues() {
    var field = root.querySelector("#compare-field").value;
    var options = values(field);
    ["#compare-a", "#compare-b"].forEach(function (id, i) {
      var select = root.querySelector(id);
      select.innerHTML = "";
      options.forEach(function (value) { select.appendChild(el("option", { value: value }, [value === "" ? "(none)" : value])); });
      select.value = options[Math.max(0, options.length - 2 + i)] || "";
    });
    renderCompare();
  }

  // Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom, then by brackets up to 120.
  var t95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042];
  // Between the table's rows, the quantile at the lower end of the bracket (the wider interval).
  function tQuantile(df) { return df <= 30 ? t95[Math.max(1, Math.floor(df)) - 1] : df <= 40 ? 2.042 : df <= 60 ? 2.021 : df <= 120 ? 2.000 : 1.980; }

  // B against A: the difference of the mean times in percent of A, Welch's 95 % interval, and what it means.
  function difference(a, b) {
    var change = (b.mean / a.mean - 1) * 100;
    if (a.n < 2 || b.n < 2) return { change: change, low: null, high: null, verdict: "too few runs to judge" };
    var va = a.sd * a.sd / a.n, vb = b.sd * b.sd / b.n, se = Math.sqrt(va + vb);
    if (se === 0) return { change: change, low: change, high: change, verdict: change === 0 ? "no change" : change > 0 ? "slower" : "faster" };
    var df = (va + vb) * (va + vb) / (va * va / (a.n - 1) + vb * vb / (b.n - 1));
    var half = tQuantile(df) * se / a.mean * 100;
    var low = change - half, high = change + half;
    return { change: change, low: low, high: high, verdict: low > 0 ? "slower" : high < 0 ? "faster" : "no significant change" };
  }

  function renderCompare() {
    var field = root.querySelector("#compare-field").value;
    var a = root.querySelector("#compare-a").value, b = root.querySelector("#compare-b").value;
    var rows = selected(field);
    var others = fields.filter(function (f) { return f !== field; });
    var keyOf = function (row) { return others.map(function (f) { return row.key[f]; }).join("|"); };
    var left = {};
    rows.filter(function (row) { return row.key[field] === a; }).forEach(function (row) { left[keyOf(row)] = row; });
    var pairs = rows.filter(function (row) { return row.key[field] === b && left[keyOf(row)]; }).map(function (row) { return [left[keyOf(row)], row]; });
    var shown = varying(pairs.map(function (p) { return p[0]; })).filter(function (f) { return f !== field; });
    var table = root.querySelector("#compare-table");
    table.innerHTML = "";
    table.appendChild(el("thead", {}, [el("tr", {}, ["Row", field + " " + a + " (s)", field + " " + b + " (s)", "Change", "95 % interval", "Verdict"]
      .map(function (name) { return el("th", {}, [name]); }))]));
    table.appendChild(el("tbody", {}, pairs.map(function (pair) {
      var d = difference(pair[0], pair[1]);
      return el("tr", { "data-verdict": d.verdict }, [
        el("td", { "data-column": "row" }, [label(pair[1], shown)]),
        el("td", { "data-column": "a" }, [format(pair[0].mean, 3)]), el("td", { "data-column": "b" }, [format(pair[1].mean, 3)]),
        el("td", { "data-column": "change" }, [(d.change >= 0 ? "+" : "") + format(d.change, 1) + " %"]),
        el("td", { "data-column": "interval" }, [d.low === null ? "–" : format(d.low, 1) + " % to " + format(d.high, 1) + " %"]),
        el("td", { "data-column": "verdict" }, [d.verdict])
      ]);
    })));
    root.querySelector("#compare-note").textContent = a === b ? "Pick two different values." : pairs.length === 0
      ? "No row was measured at both values with everything else the same (the other fields' filters apply)." : pairs.length + " row(s) measured at both.";
  }

  function render() {
    var rows = selected();
    renderTable(rows);
    renderChart(rows);
    renderCompare();
  }

  buildFilters();
  buildControls();
  render();
  root.setAttribute("data-ready", "true");
})();
