/* rooflinec calculator: a visitor's chip, kernels and model on the roofline, in the browser.
 *
 * The build writes every kernel's and model's formulas as the safe parser's validated
 * tree (JSON, inline in the page, `#rooflinec-calculator-data`); this script checks each
 * tree against the parser's limits and evaluates it with the exact core
 * (`calculator-exact.js`, loaded first): no formula text is parsed here and nothing is
 * `eval`ed. Every number is an exact rational of BigInts; the bound is decided on exact
 * times with the method's tie order (compute, then the levels in order; the latency
 * floor only when strictly slower). Floats appear only in the chart. Typed figures are
 * parsed as specs parse them, with the command line's messages. Every input lives in the
 * address's fragment, so a link reproduces the calculation. No request leaves the page
 * (the chart runtime is a file beside it). */
(function () {
  "use strict";

  var root = document.getElementById("rooflinec-calculator");
  var dataNode = document.getElementById("rooflinec-calculator-data");
  if (!root || !dataNode) { return; }
  var DATA = JSON.parse(dataNode.textContent);
  var self = document.currentScript;
  var base = self && self.src ? self.src.replace(/[^\/]*$/, "") : "";

  var X = window.rooflinecExact(DATA.limits);
  var CalcError = X.CalcError;
  var MAX_SHAPE = X.MAX_SHAPE;
  var ONE = X.ONE;
  var TWO = X.TWO;
  var ZERO = X.ZERO;
  var add = X.add;
  var checkTree = X.checkTree;
  var cmp = X.cmp;
  var div = X.div;
  var evaluate = X.evaluate;
  var evaluateCount = X.evaluateCount;
  var exactText = X.exactText;
  var fail = X.fail;
  var floor = X.floor;
  var formatNumber = X.formatNumber;
  var formatPercent = X.formatPercent;
  var formatSI = X.formatSI;
  var int = X.int;
  var isZero = X.isZero;
  var join = X.join;
  var mul = X.mul;
  var parseQuantity = X.parseQuantity;
  var parseRat = X.parseRat;
  var parseShape = X.parseShape;
  var parseWhole = X.parseWhole;
  var rat = X.rat;
  var ratText = X.ratText;
  var shown = X.shown;
  var slowest = X.slowest;
  var thousands = X.thousands;
  var toFloat = X.toFloat;

  Object.keys(DATA.kernels).forEach(function (id) {
    var k = DATA.kernels[id];
    var trees = [k.flops].concat(Object.keys(k.bytes).map(function (lv) { return k.bytes[lv]; }));
    k.valid = trees.every(function (t) { return checkTree(t, false); });
  });
  var CASES = {};
  Object.keys(DATA.kernels).forEach(function (id) {
    DATA.kernels[id].cases.forEach(function (c) { CASES[c.id] = { kernel: id, c: c }; });
  });
  var LEVELS = DATA.levels.map(function (l) { return l[0]; });
  var LEVEL_NAME = {};
  DATA.levels.forEach(function (l) { LEVEL_NAME[l[0]] = l[1]; });
  var PRECISIONS = Object.keys(DATA.precisions);
  var WIDTH = {};
  PRECISIONS.forEach(function (p) { WIDTH[p] = parseRat(DATA.precisions[p].bytes); });

  function rateUnit(p) { return DATA.precisions[p].unit + "/s"; }
  function intensityUnit(p) { return DATA.precisions[p].unit + "/B"; }
  function limitName(limit) { return LEVEL_NAME[limit] || limit; }


  /* ------------------------------------------------------------------ the roof */

  // One run's time and limit on a roof: operations over the peak, bytes over each level
  // both the kernel and the chip give (the peak or the bandwidths scaled for a sweep).
  function runTime(flops, bytes, peak, bandwidths, floor, peakX, bwX) {
    var p = peakX ? mul(peak, peakX) : peak;
    var levels = LEVELS.filter(function (lv) { return bandwidths[lv] && bytes[lv]; }).map(function (lv) {
      return [lv, div(bytes[lv], bwX ? mul(bandwidths[lv], bwX) : bandwidths[lv])];
    });
    return slowest(div(flops, p), levels, floor);
  }
  // A kernel's bound: its run's time and limit, and the attainable rate.
  function bound(flops, bytes, peak, bandwidths, floor, peakX, bwX) {
    var b = runTime(flops, bytes, peak, bandwidths, floor, peakX, bwX);
    if (isZero(b.time)) { fail("the kernel does no work and moves no bytes at this shape"); }
    b.rate = div(flops, b.time);
    return b;
  }
  var SWEEP = [["0.5", rat(ONE, TWO)], ["1", int(1)], ["2", int(2)], ["4", int(4)]];

  /* ------------------------------------------------------------------- the state */

  function deviceState(id) {
    var d = DATA.devices[id];
    var peaks = {};
    PRECISIONS.forEach(function (p) {
      peaks[p] = d && d.peaks[p] ? exactText(parseRat(d.peaks[p]), rateUnit(p)) || "" : "";
    });
    var memory = {};
    LEVELS.forEach(function (lv) {
      var m = d && d.memory[lv];
      memory[lv] = {
        bw: m ? exactText(parseRat(m[0]), "B/s") || "" : "",
        share: m ? exactText(parseRat(m[1]), "%") : "100%"
      };
    });
    return {
      device: d ? id : "",
      peaks: peaks,
      share: d ? exactText(parseRat(d.compute_share), "%") : "100%",
      memory: memory,
      latency: d && d.latency ? exactText(parseRat(d.latency), "s") || "" : "",
      smem: d && d.smem ? exactText(parseRat(d.smem), "B") || "" : ""
    };
  }
  function caseRow(id, precision) {
    var found = CASES[id];
    var shape = {};
    Object.keys(found.c.shape).forEach(function (k) { shape[k] = found.c.shape[k]; });
    var widths = {};
    DATA.kernels[found.kernel].widths.forEach(function (w) { widths[w] = found.c.widths[w] || ""; });
    return { kind: "case", case: id, precision: precision || found.c.precision, shape: shape, widths: widths, measured: "" };
  }
  function rawRow() {
    return { kind: "raw", name: "my kernel", precision: "bf16", ops: "1 TFLOP", bytes: { dram: "1 GB", l2: "", l1: "" }, measured: "" };
  }
  // A model at its first named deployment and its first decode phase (else its first).
  function modelState(id) {
    var m = MODELS[id];
    if (!m) { return null; }
    var phases = Object.keys(m.phases);
    var phase = phases.filter(function (p) { return m.phases[p].s === "1"; })[0] || phases[0];
    var run = m.phases[phase] || {};
    return { id: id, deployment: Object.keys(m.deployments)[0], b: run.b || "1", s: run.s || "1", L: run.L || "1", phase: phase || "" };
  }
  function defaults() {
    var s = { chip: deviceState(DATA.defaults.device), rows: [], compare: 0, model: modelState(DATA.defaults.model) };
    DATA.defaults.cases.forEach(function (c) { if (CASES[c]) { s.rows.push(caseRow(c)); } });
    return s;
  }

  // The state a fragment asks for: `#s=<JSON>` (everything, as the page writes it), or
  // `#device=ID`, `#kernel=ID`, `#case=ID` (or the same as a query: a page of the site
  // links `calculator.html?device=ID`).
  function fromFragment(hash, query) {
    var text = hash.replace(/^#/, "") || (query || "").replace(/^\?/, "");
    if (!text) { return defaults(); }
    if (text.slice(0, 2) === "s=") {
      try { return clean(JSON.parse(decodeURIComponent(text.slice(2)))); } catch (e) { return defaults(); }
    }
    var s = defaults();
    var params = new URLSearchParams(text);
    var device = params.get("device");
    if (device && DATA.devices[device]) { s.chip = deviceState(device); }
    var model = params.get("model");
    if (model && MODELS[model]) { s.model = modelState(model); }
    var kernels = params.getAll("kernel").filter(function (k) { return DATA.kernels[k]; });
    var cases = params.getAll("case").filter(function (c) { return CASES[c]; });
    if (kernels.length || cases.length) {
      s.rows = [];
      kernels.forEach(function (k) { DATA.kernels[k].cases.forEach(function (c) { s.rows.push(caseRow(c.id)); }); });
      cases.forEach(function (c) { s.rows.push(caseRow(c)); });
    }
    return s;
  }
  function str(v, fallback) { return typeof v === "string" ? v.slice(0, 20000) : fallback; }
  // A fragment is the visitor's to edit: keep only what the state holds, as strings.
  function clean(raw) {
    var s = defaults();
    if (!raw || typeof raw !== "object") { return s; }
    var chip = raw.chip && typeof raw.chip === "object" ? raw.chip : {};
    s.chip.device = DATA.devices[chip.device] ? chip.device : "";
    PRECISIONS.forEach(function (p) { s.chip.peaks[p] = str(chip.peaks && chip.peaks[p], ""); });
    s.chip.share = str(chip.share, "100%");
    LEVELS.forEach(function (lv) {
      var m = chip.memory && chip.memory[lv] ? chip.memory[lv] : {};
      s.chip.memory[lv] = { bw: str(m.bw, ""), share: str(m.share, "100%") };
    });
    s.chip.latency = str(chip.latency, "");
    s.chip.smem = str(chip.smem, "");
    s.rows = [];
    (Array.isArray(raw.rows) ? raw.rows.slice(0, 500) : []).forEach(function (r) {
      if (!r || typeof r !== "object") { return; }
      var precision = DATA.precisions[r.precision] ? r.precision : "bf16";
      if (r.kind === "case" && CASES[r.case]) {
        var row = caseRow(r.case, precision);
        Object.keys(row.shape).forEach(function (k) { row.shape[k] = str(r.shape && r.shape[k], row.shape[k]); });
        Object.keys(row.widths).forEach(function (k) {
          var v = r.widths && r.widths[k];
          row.widths[k] = v === "" || DATA.precisions[v] ? v : row.widths[k];
        });
        row.measured = str(r.measured, "");
        s.rows.push(row);
      } else if (r.kind === "raw") {
        var bytes = {};
        LEVELS.forEach(function (lv) { bytes[lv] = str(r.bytes && r.bytes[lv], ""); });
        s.rows.push({ kind: "raw", name: str(r.name, "my kernel").slice(0, 200), precision: precision,
          ops: str(r.ops, ""), bytes: bytes, measured: str(r.measured, "") });
      }
    });
    s.compare = Number.isInteger(raw.compare) && raw.compare >= 0 && raw.compare < s.rows.length ? raw.compare : 0;
    var m = raw.model && typeof raw.model === "object" ? raw.model : null;
    s.model = m && MODELS[m.id] ? modelState(m.id) : null;
    if (s.model) {
      if (MODELS[m.id].deployments[m.deployment]) { s.model.deployment = m.deployment; }
      ["b", "s", "L"].forEach(function (k) { s.model[k] = str(m[k], s.model[k]); });
      s.model.phase = MODELS[m.id].phases[m.phase] ? m.phase : "";
    }
    return s;
  }

  /* ------------------------------------------------------------------ computing */

  // The chip as typed: sustained peaks and bandwidths, the floor; errors by field.
  function readChip(chip, errors) {
    function field(key, label, fn) {
      try { return fn(); } catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        errors[key] = label + ": " + e.message;
        return null;
      }
    }
    var share = field("chip.share", "compute share", function () { return parseQuantity(chip.share, "share", false); });
    var peaks = {}, bandwidths = {}, dense = {};
    PRECISIONS.forEach(function (p) {
      var text = chip.peaks[p];
      if (!text || !text.trim()) { return; }
      var v = field("chip.peaks." + p, "peak at " + DATA.precisions[p].label, function () {
        return parseQuantity(text, "rate", true);
      });
      if (v !== null) { dense[p] = v; if (share) { peaks[p] = mul(v, share); } }
    });
    LEVELS.forEach(function (lv) {
      var m = chip.memory[lv];
      if (!m.bw || !m.bw.trim()) { return; }
      var bw = field("chip.memory." + lv + ".bw", LEVEL_NAME[lv] + " bandwidth", function () {
        return parseQuantity(m.bw, "bandwidth", true);
      });
      var s = field("chip.memory." + lv + ".share", LEVEL_NAME[lv] + " share", function () {
        return parseQuantity(m.share, "share", false);
      });
      if (bw && s) { bandwidths[lv] = mul(bw, s); }
    });
    var latency = null;
    if (chip.latency && chip.latency.trim()) {
      latency = field("chip.latency", "launch latency", function () { return parseQuantity(chip.latency, "time", true); });
    }
    // One core's shared memory: what a tiled kernel's traffic reads (`smem`), whole bytes.
    var smem = null;
    if (chip.smem && chip.smem.trim()) {
      smem = field("chip.smem", "shared memory per core", function () {
        var v = parseQuantity(chip.smem, "bytes", true);
        if (v.d !== ONE) { fail("shared memory per core is a whole number of bytes", "write it as the vendor prints it, as in '228 KiB'"); }
        return v;
      });
    }
    return { peaks: peaks, bandwidths: bandwidths, latency: latency, smem: smem };
  }

  // A row's counts at its precision: operations, bytes per level, launches.
  function counts(row, index, errors, chip) {
    var key = "rows." + index + ".";
    if (row.kind === "raw") {
      var flops = null, bytes = {}, ok = true;
      try { flops = parseQuantity(row.ops, "ops", true); } catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        errors[key + "ops"] = "operations: " + e.message; ok = false;
      }
      LEVELS.forEach(function (lv) {
        var t = row.bytes[lv];
        if (!t || !t.trim()) { return; }
        try { bytes[lv] = parseQuantity(t, "bytes", true); } catch (e) {
          if (!(e instanceof CalcError)) { throw e; }
          errors[key + "bytes." + lv] = "bytes at " + LEVEL_NAME[lv] + ": " + e.message; ok = false;
        }
      });
      return ok ? { flops: flops, bytes: bytes, launches: 1, name: row.name } : null;
    }
    var found = CASES[row.case], kernel = DATA.kernels[found.kernel];
    if (!kernel.valid) { errors[key + "case"] = "the kernel's formula tree is not one the parser makes"; return null; }
    var env = {}, good = true;
    kernel.symbols.forEach(function (sym) {
      try { env[sym] = parseShape(sym, (row.shape[sym] || "").trim()); } catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        errors[key + "shape." + sym] = e.message; good = false;
      }
    });
    if (!good) { return null; }
    var w = WIDTH[row.precision];
    env.w = w;
    kernel.widths.forEach(function (sym) {
      var bound = row.widths ? row.widths[sym] : found.c.widths[sym];
      env[sym] = bound ? WIDTH[bound] : w;
    });
    try {
      var out = { flops: evaluateCount(kernel.flops, env), bytes: {}, launches: found.c.launches, name: found.c.name };
      // A tiled kernel's level reads the chip's shared memory per core; without it that
      // level is no ceiling, as in `compile`.
      if (chip.smem) { env.smem = chip.smem; }
      Object.keys(kernel.bytes).forEach(function (lv) {
        if (kernel.shared.indexOf(lv) >= 0 && !chip.smem) { return; }
        out.bytes[lv] = evaluateCount(kernel.bytes[lv], env);
      });
      return out;
    } catch (e) {
      if (!(e instanceof CalcError)) { throw e; }
      errors[key + "case"] = e.message;
      return null;
    }
  }

  function catalogMeasured(row, device) {
    if (row.kind !== "case" || !device) { return null; }
    var m = CASES[row.case].c.measured.filter(function (x) { return x[0] === device && x[1] === row.precision; });
    return m.length ? parseRat(m[0][2]) : null;
  }

  // One row on one roof: every figure the tables print, exactly.
  function cell(c, precision, chip) {
    var peak = chip.peaks[precision];
    var floor = chip.latency ? mul(int(c.launches), chip.latency) : null;
    var b = bound(c.flops, c.bytes, peak, chip.bandwidths, floor);
    var intensity = {};
    Object.keys(c.bytes).forEach(function (lv) { if (!isZero(c.bytes[lv])) { intensity[lv] = div(c.flops, c.bytes[lv]); } });
    return { bound: b, intensity: intensity, share: div(b.rate, peak), peak: peak, floor: floor };
  }

  function compute(state) {
    var errors = {};
    var chip = readChip(state.chip, errors);
    var rows = state.rows.map(function (row, i) {
      var c = counts(row, i, errors, chip);
      var out = { row: row, counts: c, precision: row.precision };
      if (!c) { return out; }
      if (!chip.peaks[row.precision]) {
        out.problem = "the chip has no peak at " + DATA.precisions[row.precision].label + " (or its peak or share is not valid)";
        return out;
      }
      try {
        out.cell = cell(c, row.precision, chip);
        var first = LEVELS.filter(function (lv) { return out.cell.intensity[lv]; })[0];
        out.level = first || null;
        out.ridge = first && chip.bandwidths[first] ? div(chip.peaks[row.precision], chip.bandwidths[first]) : null;
        var measured = null;
        if (row.measured && row.measured.trim()) {
          try { measured = parseQuantity(row.measured, "rate", true); } catch (e) {
            if (!(e instanceof CalcError)) { throw e; }
            errors["rows." + i + ".measured"] = "measured rate: " + e.message;
          }
        } else { measured = catalogMeasured(row, state.chip.device); }
        out.measured = measured;
        out.efficiency = measured ? div(measured, out.cell.bound.rate) : null;
        var floor = out.cell.floor;
        out.sweeps = {
          bandwidth: SWEEP.map(function (s) {
            return bound(c.flops, c.bytes, out.cell.peak, chip.bandwidths, floor, null, s[1]).rate;
          }),
          peak: SWEEP.map(function (s) {
            return bound(c.flops, c.bytes, out.cell.peak, chip.bandwidths, floor, s[1], null).rate;
          })
        };
      } catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        out.problem = e.message;
      }
      return out;
    });
    return { chip: chip, rows: rows, errors: errors, model: computeModel(state.model, errors) };
  }

  function computeModel(m, errors) {
    if (!m) { return null; }
    var model = MODELS[m.id], out = { model: model, state: m };
    var run = {}, limits = { b: [MAX_BATCH, "a batch"], s: [MAX_TOKENS, "a token count"], L: [MAX_TOKENS, "a token count"] };
    ["b", "s", "L"].forEach(function (k) {
      try { run[k] = parseWhole(k, (m[k] || "").trim(), limits[k][0], limits[k][1]); } catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        errors["model." + k] = e.message;
      }
    });
    if (!run.b || !run.s || !run.L) { out.problem = "see the inputs above"; return out; }
    try { out.pass = modelPass(model, model.deployments[m.deployment], run.b, run.s, run.L, m.phase); } catch (e) {
      if (!(e instanceof CalcError)) { throw e; }
      out.problem = e.message;
    }
    return out;
  }

  /* ------------------------------------------------------------ a model's pass */

  var MAX_BATCH = BigInt(1 << 20), MAX_TOKENS = BigInt(10000000), MAX_STEP_COUNT = BigInt(1000000000);
  var MODEL_LIMITS = ["compute"].concat(LEVELS, ["latency", "scale_up", "scale_out"]);
  var MODELS = DATA.models || {};
  Object.keys(MODELS).forEach(function (id) {
    var m = MODELS[id], trees = [m.tokens];
    m.steps.forEach(function (st) {
      trees.push(st.count);
      Object.keys(st.shape).forEach(function (k) { trees.push(st.shape[k]); });
    });
    var k = DATA.step_kernels;
    m.steps.forEach(function (st) {
      trees.push(k[st.kernel].flops);
      Object.keys(k[st.kernel].bytes).forEach(function (lv) { trees.push(k[st.kernel].bytes[lv]); });
    });
    if (m.memory) {
      ["weights", "kv", "kv_per_token", "activations"].forEach(function (t) {
        if (m.memory[t] && m.memory[t].tree) { trees.push(m.memory[t].tree); }
      });
    }
    m.valid = trees.every(function (t) { return checkTree(t, true); });
  });

  // A red factor: the values one chip sends per value of the message, per direction.
  function redFactor(kind, n, inNetwork) {
    if (kind === "all-reduce") {
      var ring = rat(TWO * (n - ONE), n);
      return inNetwork && cmp(ring, int(1)) > 0 ? int(1) : ring;
    }
    if (kind === "all-gather" || kind === "reduce-scatter" || kind === "all-to-all") { return rat(n - ONE, n); }
    return int(1);
  }
  function whole(v, what, limit) {
    if (v.d !== ONE) { fail(what + " = " + ratText(v) + ", not a whole number"); }
    if (v.n > limit) { fail(what + " is implausibly large"); }
    return v;
  }
  function addTo(sums, key, v) { sums[key] = sums[key] ? add(sums[key], v) : v; }

  // One pass of `model` at b, s, L on a deployment of a bundled device: every step on
  // its own roofline, the collectives on the device's fabric, as the engine's
  // `ModelEngine.evaluate` at a run point; and the memory ledger against the capacity.
  function modelPass(model, dep, b, s, L, phase) {
    if (!model.valid) { fail("the model's formula trees are not ones the parser makes"); }
    var device = DATA.devices[dep.device], chip = bundledChip(dep.device), links = device.links;
    var vars = {};
    Object.keys(model.parameters).forEach(function (k) { vars[k] = parseRat(model.parameters[k]); });
    vars.b = b; vars.s = s; vars.L = L;
    ["tp", "pp", "ep", "dp"].forEach(function (k) { vars[k] = int(dep[k]); });
    var kernels = DATA.step_kernels;
    var time = int(0), talk = int(0), byLimit = {}, flops = int(0), traffic = {}, roles = [], steps = [];
    model.steps.forEach(function (st) {
      var where = "step '" + st.id + "'";
      var kernel = kernels[st.kernel], collective = kernel.collective;
      var count = whole(evaluate(st.count, vars), where + ": count", MAX_STEP_COUNT);
      if (count.n < ZERO || (count.n === ZERO && !collective)) { fail(where + ": its count is " + ratText(count)); }
      var shape = {};
      Object.keys(st.shape).forEach(function (sym) {
        var v = evaluate(st.shape[sym], vars);
        shape[sym] = st.fractional.indexOf(sym) >= 0 && v.d !== ONE ? v : whole(v, where + ": " + sym, MAX_SHAPE);
      });
      if (collective && !(shape.n && shape.n.n > ONE && count.n > ZERO)) { return; }
      Object.keys(shape).forEach(function (sym) {
        var v = shape[sym];
        if (cmp(v, int(1)) < 0 && !(st.fractional.indexOf(sym) >= 0 && v.n > ZERO)) {
          fail(where + ": " + sym + " = " + ratText(v) + ", not 1 or more");
        }
      });
      var at = st.precision || model.precision, w = WIDTH[at];
      var values = Object.assign({}, shape, { w: w });
      kernel.widths.forEach(function (sym) { values[sym] = st.widths[sym] ? WIDTH[st.widths[sym]] : w; });
      var peak = chip.peaks[at];
      if (!peak) { fail(where + ": the device has no peak at " + DATA.precisions[at].label); }
      var runFlops = evaluateCount(kernel.flops, values), run;
      if (!collective) {
        var runBytes = {};
        Object.keys(kernel.bytes).forEach(function (lv) { runBytes[lv] = evaluateCount(kernel.bytes[lv], values); });
        run = runTime(runFlops, runBytes, peak, chip.bandwidths, chip.latency);
        Object.keys(runBytes).forEach(function (lv) { addTo(traffic, lv, mul(runBytes[lv], count)); });
        var total = mul(run.time, count);
        time = add(time, total);
        addTo(byLimit, run.limit, total);
        steps.push({ step: st, count: count, time: total, limit: run.limit, shape: shape });
      } else {
        var n = shape.n.n, span = n;
        if (st.n_symbols.indexOf("dp") >= 0) { span = n * BigInt(dep.tp * dep.pp); }
        else if (st.n_symbols.indexOf("pp") >= 0) { span = n * BigInt(dep.tp); }
        var up = links.scale_up;
        var role = up && (up.domain === null || span <= BigInt(up.domain)) ? "scale_up" : "scale_out";
        var link = links[role];
        if (!link) { fail("no " + role.replace("_", "-") + " level for a group of " + span + " chips"); }
        var bandwidth = parseRat(link.bandwidth);
        if (link.topology === "mesh" && link.domain !== null && ONE < n && n < BigInt(link.domain)) {
          bandwidth = mul(bandwidth, rat(n - ONE, BigInt(link.domain) - ONE));
        }
        values.red = redFactor(collective, n, link.in_network);
        var nbytes = evaluateCount(kernel.bytes.scale_up, values);
        var floors = [];
        if (link.latency !== null) { floors.push([role, parseRat(link.latency)]); }
        if (chip.latency) { floors.push(["latency", chip.latency]); }
        run = slowest(div(runFlops, peak), [[role, div(nbytes, bandwidth)]], null, floors);
        var spent = mul(run.time, count);
        talk = add(talk, spent);
        addTo(byLimit, run.limit, spent);
        addTo(traffic, role, mul(nbytes, count));
        if (roles.indexOf(role) < 0) { roles.push(role); }
        steps.push({ step: st, count: count, time: spent, limit: run.limit, shape: shape });
      }
      flops = add(flops, mul(runFlops, count));
    });
    var passTime = add(time, talk);
    if (isZero(passTime)) { fail("the pass takes no time"); }
    var split = { compute: byLimit.compute || int(0) };
    LEVELS.forEach(function (lv) { if (chip.bandwidths[lv] && traffic[lv]) { split[lv] = byLimit[lv] || int(0); } });
    if (chip.latency) { split.latency = byLimit.latency || int(0); }
    ["scale_up", "scale_out"].forEach(function (r) { if (roles.indexOf(r) >= 0) { split[r] = byLimit[r] || int(0); } });
    var longest = null;
    MODEL_LIMITS.forEach(function (k) { if (split[k] && (longest === null || cmp(split[k], split[longest]) > 0)) { longest = k; } });
    var spec = phase && model.speculation[phase], tokens;
    if (spec) {
      tokens = parseRat(spec.tokens);  // b × the expected tokens of a verify pass
    } else {
      tokens = evaluate(model.tokens, vars);
      if (tokens.d !== ONE || tokens.n < ONE) { fail("tokens = " + ratText(tokens) + ", not a whole number from 1"); }
    }
    return {
      time: passTime, tokens: tokens, flops: flops, split: split, limit: longest, steps: steps, speculation: spec || null,
      rate: div(tokens, passTime), fit: memoryFit(model, dep, device, vars)
    };
  }

  function term(t, scope) { return t.value ? parseRat(t.value) : evaluate(t.tree, scope); }

  // The ledger per chip at b and L, as `rooflinec.engine.memory` finds it.
  function memoryFit(model, dep, device, vars) {
    var ledger = model.memory;
    if (!ledger) { return null; }
    var scope = Object.assign({}, vars);
    scope.w = WIDTH[model.precision];
    Object.keys(ledger.widths).forEach(function (k) { scope[k] = WIDTH[ledger.widths[k]]; });
    var b = vars.b, L = vars.L;
    var weights = term(ledger.weights, scope);
    var kv;
    if (!ledger.kv) {
      kv = ledger.kv_per_token ? mul(mul(b, L), term(ledger.kv_per_token, scope)) : int(0);
    } else {
      var values = Object.assign({}, scope);
      if (ledger.kv_per_token) { values.kv_per_token = term(ledger.kv_per_token, values); }
      kv = term(ledger.kv, values);
    }
    var activations;
    if (!ledger.activations) {
      var perSequence;
      try { perSequence = div(activationRule(model, Object.assign({}, scope, { L: vars.s })), b); }
      catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        perSequence = div(activationRule(model, scope), b);
      }
      activations = mul(b, perSequence);
    } else if (ledger.activations.value) {
      activations = mul(b, parseRat(ledger.activations.value));
    } else {
      activations = term(ledger.activations, scope);
    }
    var used = add(add(weights, kv), activations);
    if (device.capacity === null) { return { weights: weights, kv: kv, activations: activations, used: used, fits: null }; }
    var capacity = parseRat(device.capacity), reserve = mul(parseRat(ledger.reserve), capacity);
    var total = add(used, reserve);
    return { weights: weights, kv: kv, activations: activations, reserve: reserve, total: total,
      capacity: capacity, fits: cmp(total, capacity) <= 0 };
  }

  // The largest step's DRAM bytes of one run (its other widths at 0), B per chip.
  function activationRule(model, scope) {
    var best = int(0);
    model.steps.forEach(function (st) {
      var kernel = DATA.step_kernels[st.kernel], formula = kernel.bytes.dram;
      if (!formula) { return; }
      var values = {};
      Object.keys(st.shape).forEach(function (sym) {
        var v = evaluate(st.shape[sym], scope);
        var fraction = st.fractional.indexOf(sym) >= 0 && v.n > ZERO && v.d !== ONE;
        if (!fraction && (v.d !== ONE || v.n <= ZERO)) { fail("not a deployment"); }
        values[sym] = v;
      });
      values.w = WIDTH[st.precision || model.precision];
      kernel.widths.forEach(function (sym) { values[sym] = int(0); });
      var found = evaluate(formula, values);
      if (cmp(found, best) > 0) { best = found; }
    });
    return best;
  }

  /* ------------------------------------------------------------------ rendering */

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fig(value, text) {
    return '<td class="rooflinec-num" data-exact="' + ratText(value) + '">' + esc(text) + "</td>";
  }
  var DASH = "<td>–</td>";

  var state = defaults();

  function input(key, label, value, attrs) {
    var id = "calc-" + key.replace(/[^A-Za-z0-9_-]/g, "-");
    return '<label for="' + id + '">' + esc(label) + '</label> <input type="text" id="' + id +
      '" data-key="' + esc(key) + '" value="' + esc(value) + '" spellcheck="false" autocomplete="off"' +
      ' aria-describedby="' + id + '-error"' + (attrs || "") + '><span class="rooflinec-calc-error" id="' +
      id + '-error" role="alert" data-error="' + esc(key) + '"></span>';
  }
  function select(key, label, options, value) {
    var id = "calc-" + key.replace(/[^A-Za-z0-9_-]/g, "-");
    return '<label for="' + id + '">' + esc(label) + '</label> <select id="' + id + '" data-key="' + esc(key) + '">' +
      options.map(function (o) {
        return '<option value="' + esc(o[0]) + '"' + (o[0] === value ? " selected" : "") + ">" + esc(o[1]) + "</option>";
      }).join("") + "</select>";
  }

  function renderInputs() {
    var chip = state.chip;
    var devices = [["", "your own chip"]].concat(Object.keys(DATA.devices).map(function (id) { return [id, DATA.devices[id].name]; }));
    var precisions = PRECISIONS.map(function (p) { return [p, DATA.precisions[p].label]; });
    var cases = [];
    Object.keys(DATA.kernels).forEach(function (k) {
      DATA.kernels[k].cases.forEach(function (c) { cases.push([c.id, DATA.kernels[k].name + ": " + c.name]); });
    });
    var html = '<section class="rooflinec-calc-chip" aria-labelledby="calc-chip-title"><h2 id="calc-chip-title">Chip</h2>';
    html += "<p>" + select("chip.device", "Fill from a bundled device", devices, chip.device) +
      ' <button type="button" data-action="reset">Reset to the bundled figures</button></p>';
    html += '<table class="rooflinec-calc-inputs"><caption>Dense peaks per precision (data-sheet figures; leave empty where the chip has none)</caption><tbody>';
    PRECISIONS.forEach(function (p) {
      html += "<tr><td>" + input("chip.peaks." + p, "peak at " + DATA.precisions[p].label, chip.peaks[p]) + "</td></tr>";
    });
    html += "</tbody></table>";
    html += "<p>" + input("chip.share", "compute share sustained", chip.share) + "</p>";
    html += '<table class="rooflinec-calc-inputs"><caption>Memory levels (leave a bandwidth empty where the chip gives none)</caption><tbody>';
    LEVELS.forEach(function (lv) {
      html += "<tr><td>" + input("chip.memory." + lv + ".bw", LEVEL_NAME[lv] + " bandwidth", chip.memory[lv].bw) +
        "</td><td>" + input("chip.memory." + lv + ".share", LEVEL_NAME[lv] + " share sustained", chip.memory[lv].share) + "</td></tr>";
    });
    html += "</tbody></table>";
    html += "<p>" + input("chip.latency", "launch latency (the floor; empty: none)", chip.latency) + "</p>";
    html += "<p>" + input("chip.smem", "shared memory per core (what a tiled kernel's traffic reads; empty: none)", chip.smem) + "</p></section>";

    html += '<section class="rooflinec-calc-kernels" aria-labelledby="calc-kernels-title"><h2 id="calc-kernels-title">Kernels</h2><ol>';
    state.rows.forEach(function (row, i) {
      var key = "rows." + i + ".";
      html += '<li class="rooflinec-calc-row">';
      if (row.kind === "case") {
        var kernel = DATA.kernels[CASES[row.case].kernel];
        html += select(key + "case", "case", cases, row.case) + " ";
        kernel.symbols.forEach(function (sym) { html += input(key + "shape." + sym, sym, row.shape[sym] || "", ' inputmode="numeric" size="10"') + " "; });
        kernel.widths.forEach(function (sym) {
          html += select(key + "widths." + sym, sym + " (bytes per value)", [["", "w: the row's precision"]].concat(precisions), (row.widths || {})[sym] || "") + " ";
        });
      } else {
        html += input(key + "name", "name", row.name) + " " + input(key + "ops", "operations", row.ops) + " ";
        LEVELS.forEach(function (lv) { html += input(key + "bytes." + lv, "bytes at " + LEVEL_NAME[lv], row.bytes[lv]) + " "; });
      }
      html += select(key + "precision", "precision", precisions, row.precision) + " " +
        input(key + "measured", "measured rate (optional)", row.measured) +
        ' <span class="rooflinec-calc-error" role="alert" data-error="' + key + 'case"></span>' +
        ' <button type="button" data-action="remove" data-row="' + i + '" aria-label="Remove kernel ' + (i + 1) + '">Remove</button></li>';
    });
    html += "</ol><p>" + select("add.case", "Add a catalog case", [["", "choose a case"]].concat(cases), "") +
      ' <button type="button" data-action="add-raw">Add a kernel of your own</button></p></section>';
    html += modelInputs();
    html += '<section class="rooflinec-calc-results" aria-live="polite"></section>';
    root.innerHTML = html;
  }

  function renderOutputs(result) {
    var out = root.querySelector(".rooflinec-calc-results");
    root.querySelectorAll("[data-error]").forEach(function (el) {
      var message = result.errors[el.getAttribute("data-error")] || "";
      if (el.textContent !== message) { el.textContent = message; }
      var fieldId = el.id ? el.id.replace(/-error$/, "") : null;
      var field = fieldId ? document.getElementById(fieldId) : null;
      if (field) { field.setAttribute("aria-invalid", message ? "true" : "false"); }
    });
    var chip = result.chip;
    var levels = LEVELS.filter(function (lv) {
      return result.rows.some(function (r) { return r.cell && r.cell.intensity[lv]; });
    });
    var html = '<h2 id="calc-results">Results</h2><div id="calc-chart" class="rooflinec-calc-chart"></div>';
    html += '<table class="rooflinec-calc-table" id="calc-kernels"><caption>Each kernel on the chip</caption><thead><tr><th scope="col">kernel</th><th scope="col">precision</th>';
    levels.forEach(function (lv) { html += '<th scope="col">intensity (' + esc(LEVEL_NAME[lv]) + ")</th>"; });
    html += '<th scope="col">ridge point</th><th scope="col">attainable</th><th scope="col">limited by</th><th scope="col">share of peak</th><th scope="col">time at the roofline</th><th scope="col">measured / attainable</th></tr></thead><tbody>';
    result.rows.forEach(function (r, i) {
      html += '<tr data-row="' + i + '"><th scope="row">' + esc(r.counts ? r.counts.name : rowName(r.row)) + "</th><td>" + esc(DATA.precisions[r.precision].label) + "</td>";
      if (!r.cell) {
        html += '<td colspan="' + (levels.length + 6) + '" class="rooflinec-calc-problem">' + esc(r.problem || "see the inputs above") + "</td></tr>";
        return;
      }
      var p = r.precision;
      levels.forEach(function (lv) {
        html += r.cell.intensity[lv] ? fig(r.cell.intensity[lv], formatSI(r.cell.intensity[lv], intensityUnit(p))) : DASH;
      });
      html += r.ridge ? fig(r.ridge, formatSI(r.ridge, intensityUnit(p))) : DASH;
      html += fig(r.cell.bound.rate, formatSI(r.cell.bound.rate, rateUnit(p)));
      html += '<td data-limit="' + esc(r.cell.bound.limit) + '">' + esc(limitName(r.cell.bound.limit)) + "</td>";
      html += fig(r.cell.share, formatPercent(r.cell.share));
      html += fig(r.cell.bound.time, formatSI(r.cell.bound.time, "s"));
      html += r.efficiency ? fig(r.efficiency, formatPercent(r.efficiency)) : DASH;
      html += "</tr>";
    });
    html += "</tbody></table>";

    // The chip's precision table: sustained peak and ridge point per level.
    var chipLevels = LEVELS.filter(function (lv) { return chip.bandwidths[lv]; });
    html += '<table class="rooflinec-calc-table" id="calc-precisions"><caption>The chip per precision (sustained)</caption><thead><tr><th scope="col">precision</th><th scope="col">peak</th>';
    chipLevels.forEach(function (lv) { html += '<th scope="col">' + esc(LEVEL_NAME[lv]) + " bandwidth</th><th scope=\"col\">ridge (" + esc(LEVEL_NAME[lv]) + ")</th>"; });
    html += "</tr></thead><tbody>";
    PRECISIONS.forEach(function (p) {
      if (!chip.peaks[p]) { return; }
      html += '<tr data-precision="' + p + '"><th scope="row">' + esc(DATA.precisions[p].label) + "</th>" + fig(chip.peaks[p], formatSI(chip.peaks[p], rateUnit(p)));
      chipLevels.forEach(function (lv) {
        var ridge = div(chip.peaks[p], chip.bandwidths[lv]);
        html += fig(chip.bandwidths[lv], formatSI(chip.bandwidths[lv], "B/s")) + fig(ridge, formatSI(ridge, intensityUnit(p)));
      });
      html += "</tr>";
    });
    html += "</tbody></table>";

    // Sweeps: the attainable rate with every bandwidth, or the peak, scaled.
    html += '<table class="rooflinec-calc-table" id="calc-sweeps"><caption>Attainable rate with the bandwidths or the peak scaled</caption><thead><tr><th scope="col">kernel</th>';
    SWEEP.forEach(function (s) { html += '<th scope="col">bandwidth × ' + s[0] + "</th>"; });
    SWEEP.forEach(function (s) { html += '<th scope="col">peak × ' + s[0] + "</th>"; });
    html += "</tr></thead><tbody>";
    result.rows.forEach(function (r, i) {
      if (!r.cell) { return; }
      html += '<tr data-row="' + i + '"><th scope="row">' + esc(r.counts.name) + "</th>";
      r.sweeps.bandwidth.concat(r.sweeps.peak).forEach(function (v) { html += fig(v, formatSI(v, rateUnit(r.precision))); });
      html += "</tr>";
    });
    html += "</tbody></table>";

    html += compareTable(result);
    html += modelOutputs(result);
    html += chartTable(result);
    out.innerHTML = html;
    drawChart(result);
  }

  function modelInputs() {
    var html = '<section class="rooflinec-calc-model" aria-labelledby="calc-model-title"><h2 id="calc-model-title">Model</h2><p>';
    var models = [["", "no model"]].concat(Object.keys(MODELS).map(function (id) { return [id, MODELS[id].name]; }));
    var m = state.model;
    html += select("model.id", "model", models, m ? m.id : "");
    if (m) {
      var model = MODELS[m.id];
      var deployments = Object.keys(model.deployments).map(function (name) {
        var d = model.deployments[name];
        return [name, name + ": " + d.chips + " × " + DATA.devices[d.device].name + " (tp " + d.tp + ", pp " + d.pp + ", ep " + d.ep + ")"];
      });
      var phases = [["", "none: b, s and L as typed"]].concat(Object.keys(model.phases).map(function (p) {
        var v = model.phases[p];
        return [p, p + " (b " + v.b + ", s " + v.s + ", L " + v.L + ")"];
      }));
      html += " " + select("model.deployment", "deployment", deployments, m.deployment) + "</p><p>" +
        select("model.phase", "phase", phases, m.phase || "") + " " +
        input("model.b", "b (sequences)", m.b, ' inputmode="numeric" size="8"') + " " +
        input("model.s", "s (new tokens each)", m.s, ' inputmode="numeric" size="8"') + " " +
        input("model.L", "L (keys once appended)", m.L, ' inputmode="numeric" size="8"');
    }
    return html + "</p></section>";
  }

  function limitLabel(limit) { return limit === "compute" ? "compute" : limitName(limit); }

  function modelOutputs(result) {
    var out = result.model;
    if (!out) { return ""; }
    var m = out.state, model = out.model, dep = model.deployments[m.deployment];
    var html = '<h3 id="calc-model-results">' + esc(model.name) + " on " + esc(m.deployment) + " (" + dep.chips + " × " +
      esc(DATA.devices[dep.device].name) + "), b = " + esc(m.b) + ", s = " + esc(m.s) + ", L = " + esc(m.L) + "</h3>";
    if (!out.pass) { return html + '<p class="rooflinec-calc-problem">' + esc(out.problem) + "</p>"; }
    var pass = out.pass, fit = pass.fit, unit = DATA.precisions[model.precision].unit;
    var fits = !fit || fit.fits !== false;
    html += '<table class="rooflinec-calc-table" id="calc-model"><caption>The pass, per replica (tp × pp chips)</caption><tbody>';
    html += '<tr><th scope="row">tokens/s</th>' + (fits ? fig(pass.rate, formatNumber(pass.rate, 4) + " tokens/s")
      : '<td data-fits="false">' + esc("does not fit: the ledger needs " + formatSI(fit.total, "B") + " of " + formatSI(fit.capacity, "B") + " per chip") + "</td>") + "</tr>";
    html += '<tr><th scope="row">tokens per pass</th>' + fig(pass.tokens, pass.speculation
      ? formatNumber(pass.tokens, 4) + " (expected: a verify pass of " + pass.speculation.k + " drafted, acceptance " + formatPercent(parseRat(pass.speculation.acceptance)) + ")"
      : thousands(pass.tokens.n)) + "</tr>";
    html += '<tr><th scope="row">time of the pass</th>' + fig(pass.time, formatSI(pass.time, "s")) + "</tr>";
    html += '<tr><th scope="row">attainable</th>' + fig(div(pass.flops, pass.time), formatSI(div(pass.flops, pass.time), unit + "/s")) + "</tr>";
    html += '<tr><th scope="row">limited by</th><td data-limit="' + esc(pass.limit) + '">' + esc(limitLabel(pass.limit)) + "</td></tr>";
    if (fit) {
      ["weights", "kv", "activations", "reserve", "total", "capacity"].forEach(function (k) {
        if (fit[k]) {
          var label = { weights: "weights per chip", kv: "KV cache per chip", activations: "activations per chip",
            reserve: "reserve", total: "memory in all per chip", capacity: "capacity per chip" }[k];
          html += '<tr><th scope="row">' + label + "</th>" + fig(fit[k], formatSI(fit[k], "B")) + "</tr>";
        }
      });
      html += '<tr><th scope="row">fits</th><td data-fits="' + fit.fits + '">' + (fit.fits === null ? "unknown (no capacity given)" : fit.fits ? "yes" : "no") + "</td></tr>";
    }
    html += "</tbody></table>";
    if (!fits) { return html; }
    html += '<table class="rooflinec-calc-table" id="calc-model-split"><caption>The time split: each limit\'s share of the pass</caption><thead><tr><th scope="col">limit</th><th scope="col">time</th><th scope="col">share</th></tr></thead><tbody>';
    Object.keys(pass.split).forEach(function (k) {
      var t = pass.split[k];
      html += '<tr data-limit="' + esc(k) + '"><th scope="row">' + esc(limitLabel(k)) + "</th>" + fig(t, formatSI(t, "s")) + fig(div(t, pass.time), formatPercent(div(t, pass.time))) + "</tr>";
    });
    html += "</tbody></table>";
    html += '<table class="rooflinec-calc-table" id="calc-model-steps"><caption>The steps</caption><thead><tr><th scope="col">step</th><th scope="col">kernel</th><th scope="col">count</th><th scope="col">time</th><th scope="col">limited by</th><th scope="col">share of the pass</th></tr></thead><tbody>';
    pass.steps.forEach(function (st) {
      html += '<tr data-step="' + esc(st.step.id) + '"><th scope="row">' + esc(st.step.name) + "</th><td>" + esc(st.step.kernel) + "</td>" +
        fig(st.count, thousands(st.count.n)) + fig(st.time, formatSI(st.time, "s")) +
        '<td data-limit="' + esc(st.limit) + '">' + esc(limitLabel(st.limit)) + "</td>" + fig(div(st.time, pass.time), formatPercent(div(st.time, pass.time))) + "</tr>";
    });
    return html + "</tbody></table>";
  }

  function rowName(row) { return row.kind === "case" ? CASES[row.case].c.name : row.name; }

  // One kernel row on every bundled device at its precision, as the catalog gives them.
  var DEVICE_CHIPS = {};
  function bundledChip(id) {
    if (!DEVICE_CHIPS[id]) {
      var errors = {};
      DEVICE_CHIPS[id] = readChip(deviceState(id), errors);
    }
    return DEVICE_CHIPS[id];
  }
  function compareTable(result) {
    var options = result.rows.map(function (r, i) { return [String(i), (i + 1) + ". " + (r.counts ? r.counts.name : rowName(r.row))]; });
    var html = '<h3 id="calc-compare-title">Device comparison</h3>';
    if (!options.length) { return html + "<p>Add a kernel to compare devices.</p>"; }
    var index = Math.min(state.compare, result.rows.length - 1);
    html += "<p>" + select("compare", "kernel compared", options, String(index)) + "</p>";
    var r = result.rows[index];
    if (!r.counts) { return html + "<p>" + esc("This kernel's inputs are not valid: see above.") + "</p>"; }
    var p = r.precision;
    html += '<table class="rooflinec-calc-table" id="calc-compare"><caption>' + esc(r.counts.name) + " at " + esc(DATA.precisions[p].label) +
      ' on every bundled device</caption><thead><tr><th scope="col">device</th><th scope="col">attainable</th><th scope="col">limited by</th><th scope="col">share of peak</th><th scope="col">time at the roofline</th></tr></thead><tbody>';
    var rows = [["your chip", result.chip, ""]].concat(Object.keys(DATA.devices).map(function (id) { return [DATA.devices[id].name, bundledChip(id), id]; }));
    rows.forEach(function (entry) {
      if (!entry[1].peaks[p]) { return; }
      var c;
      try {
        // A tiled kernel's counts are the device's own: evaluated again on its chip.
        var own = r.row.kind === "case" && DATA.kernels[CASES[r.row.case].kernel].shared.length ? counts(r.row, index, {}, entry[1]) : r.counts;
        if (!own) { fail("the kernel's counts do not evaluate on this chip"); }
        c = cell(own, p, entry[1]);
      } catch (e) {
        if (!(e instanceof CalcError)) { throw e; }
        html += '<tr><th scope="row">' + esc(entry[0]) + '</th><td colspan="4">' + esc(e.message) + "</td></tr>";
        return;
      }
      html += '<tr data-device="' + esc(entry[2]) + '"><th scope="row">' + esc(entry[0]) + "</th>" +
        fig(c.bound.rate, formatSI(c.bound.rate, rateUnit(p))) + '<td data-limit="' + esc(c.bound.limit) + '">' + esc(limitName(c.bound.limit)) + "</td>" +
        fig(c.share, formatPercent(c.share)) + fig(c.bound.time, formatSI(c.bound.time, "s")) + "</tr>";
    });
    return html + "</tbody></table>";
  }

  /* ------------------------------------------------------------------ the chart */

  function chartData(result) {
    var chip = result.chip, roofs = [], points = [];
    var used = {};
    result.rows.forEach(function (r) { if (r.cell) { used[r.precision] = true; } });
    var xs = [];
    result.rows.forEach(function (r) { if (r.cell && r.level) { xs.push(toFloat(r.cell.intensity[r.level])); } });
    Object.keys(used).forEach(function (p) {
      LEVELS.forEach(function (lv) { if (chip.bandwidths[lv]) { xs.push(toFloat(div(chip.peaks[p], chip.bandwidths[lv]))); } });
    });
    xs = xs.filter(function (x) { return isFinite(x) && x > 0; });
    if (!xs.length) { return { roofs: roofs, points: points }; }
    var lo = Math.min.apply(null, xs) / 8, hi = Math.max.apply(null, xs) * 8;
    Object.keys(used).forEach(function (p) {
      var peak = toFloat(chip.peaks[p]);
      LEVELS.forEach(function (lv) {
        if (!chip.bandwidths[lv]) { return; }
        var bw = toFloat(chip.bandwidths[lv]), ridge = peak / bw, name = DATA.precisions[p].label + ", " + LEVEL_NAME[lv];
        [lo, Math.min(Math.max(ridge, lo), hi), hi].forEach(function (x) {
          roofs.push({ roof: name, intensity: x, rate: Math.min(peak, x * bw) });
        });
      });
    });
    result.rows.forEach(function (r) {
      if (!r.cell || !r.level) { return; }
      var x = toFloat(r.cell.intensity[r.level]), y = toFloat(r.cell.bound.rate);
      if (isFinite(x) && isFinite(y) && x > 0 && y > 0) {
        points.push({ kernel: r.counts.name, intensity: x, rate: y, limited: limitName(r.cell.bound.limit),
          shown: formatSI(r.cell.bound.rate, rateUnit(r.precision)) });
      }
    });
    return { roofs: roofs.filter(function (d) { return isFinite(d.rate) && d.rate > 0; }), points: points };
  }

  function chartTable(result) {
    var d = chartData(result);
    var html = '<details class="rooflinec-calc-chart-data"><summary>The chart\'s data as a table</summary>' +
      '<table class="rooflinec-calc-table"><caption>Roofs: the rate at each intensity</caption><thead><tr><th scope="col">roof</th><th scope="col">intensity</th><th scope="col">rate</th></tr></thead><tbody>';
    d.roofs.forEach(function (x) { html += "<tr><td>" + esc(x.roof) + "</td><td>" + esc(x.intensity.toPrecision(4)) + "</td><td>" + esc(x.rate.toPrecision(4)) + "</td></tr>"; });
    html += "</tbody></table></details>";
    return html;
  }

  var chartTimer = null, runtime = null;
  function loadRuntime(done) {
    if (window.vegaEmbed) { done(); return; }
    if (runtime) { runtime.push(done); return; }
    runtime = [done];
    var script = document.createElement("script");
    script.src = base + "assets/rooflinec/vega-bundle.js";
    script.onload = function () { runtime.forEach(function (f) { f(); }); };
    document.head.appendChild(script);
  }
  function drawChart(result) {
    if (chartTimer) { clearTimeout(chartTimer); }
    chartTimer = setTimeout(function () {
      var d = chartData(result);
      var target = document.getElementById("calc-chart");
      if (!target || !d.points.length && !d.roofs.length) { return; }
      var spec = {
        $schema: "https://vega.github.io/schema/vega-lite/v5.json",
        width: 560, height: 340,
        title: "Each kernel on the chip's roofline",
        layer: [
          { data: { values: d.roofs }, mark: { type: "line", clip: true },
            encoding: {
              x: { field: "intensity", type: "quantitative", scale: { type: "log" }, title: "arithmetic intensity (operations per byte)" },
              y: { field: "rate", type: "quantitative", scale: { type: "log" }, title: "attainable rate (operations per second)" },
              color: { field: "roof", type: "nominal", title: "roof" } } },
          { data: { values: d.points }, mark: { type: "point", filled: true, size: 70 },
            encoding: {
              x: { field: "intensity", type: "quantitative", scale: { type: "log" } },
              y: { field: "rate", type: "quantitative", scale: { type: "log" } },
              shape: { field: "kernel", type: "nominal", title: "kernel" },
              tooltip: [{ field: "kernel" }, { field: "shown", title: "attainable" }, { field: "limited", title: "limited by" }] } }
        ]
      };
      loadRuntime(function () {
        window.vegaEmbed(target, spec, { actions: false, renderer: "svg" }).catch(function () {});
      });
    }, 120);
  }

  /* ------------------------------------------------------------------ events */

  function writeFragment() {
    var text = "#s=" + encodeURIComponent(JSON.stringify(state));
    try { history.replaceState(null, "", text); } catch (e) { /* a page from disk may refuse */ }
  }
  function setAt(key, value) {
    var parts = key.split("."), obj = state;
    for (var i = 0; i < parts.length - 1; i++) { obj = obj[parts[i]]; if (!obj) { return; } }
    obj[parts[parts.length - 1]] = value;
  }
  function update() {
    var start = performance.now();
    renderOutputs(compute(state));
    writeFragment();
    return performance.now() - start;
  }
  function rebuild() { renderInputs(); return update(); }

  root.addEventListener("input", function (event) {
    var key = event.target.getAttribute("data-key");
    if (!key || event.target.tagName !== "INPUT") { return; }
    setAt(key, event.target.value);
    if (/^model\.(b|s|L)$/.test(key)) { state.model.phase = ""; }  // no longer the phase's pass
    update();
  });
  root.addEventListener("change", function (event) {
    var key = event.target.getAttribute("data-key");
    if (!key || event.target.tagName !== "SELECT") { return; }
    var value = event.target.value;
    if (key === "chip.device") { state.chip = deviceState(value); if (!value) { state.chip.device = ""; } return void rebuild(); }
    if (key === "add.case") { if (CASES[value]) { state.rows.push(caseRow(value)); } return void rebuild(); }
    if (key === "compare") { state.compare = Number(value); return void update(); }
    if (key === "model.id") { state.model = modelState(value); return void rebuild(); }
    if (key === "model.phase") {
      var run = MODELS[state.model.id].phases[value];
      if (run) { state.model.b = run.b; state.model.s = run.s; state.model.L = run.L; state.model.phase = value; }
      return void rebuild();
    }
    var m = /^rows\.(\d+)\.case$/.exec(key);
    if (m) { state.rows[Number(m[1])] = caseRow(value, state.rows[Number(m[1])].precision); return void rebuild(); }
    setAt(key, value);
    update();
  });
  root.addEventListener("click", function (event) {
    var action = event.target.getAttribute && event.target.getAttribute("data-action");
    if (action === "reset") {
      state = defaults();
      try { history.replaceState(null, "", location.pathname + location.search); } catch (e) { /* from disk */ }
      renderInputs(); renderOutputs(compute(state));
    } else if (action === "remove") {
      state.rows.splice(Number(event.target.getAttribute("data-row")), 1);
      state.compare = 0;
      rebuild();
    } else if (action === "add-raw") {
      state.rows.push(rawRow());
      rebuild();
    }
  });
  window.addEventListener("hashchange", function () {
    if (location.hash === "#s=" + encodeURIComponent(JSON.stringify(state))) { return; }
    state = fromFragment(location.hash, location.search);
    rebuild();
  });

  // What the browser tests and the benchmark drive: the state in, the time to render out.
  window.rooflinecCalculator = {
    state: function () { return JSON.parse(JSON.stringify(state)); },
    load: function (s) { state = clean(s); return rebuild(); },
    // A bundled device's figures with rows [[case, precision], ...] of catalog cases.
    fill: function (device, rows) {
      state = { chip: deviceState(device), rows: rows.map(function (r) { return caseRow(r[0], r[1]); }), compare: 0 };
      return rebuild();
    },
    edit: function (key, value) {
      var field = root.querySelector('[data-key="' + key + '"]');
      if (field) { field.value = value; }
      setAt(key, value);
      return update();
    },
    // A bundled model at a named deployment, at b, s and L as typed.
    model: function (id, deployment, b, s, L, phase) {
      state.model = { id: id, deployment: deployment, b: b, s: s, L: L, phase: phase || "" };
      return rebuild();
    },
    // A figure parsed as the page parses inputs: [exact value] or [null, message].
    parse: function (text, dim, positive) {
      try { return [ratText(dim === "shape" ? parseShape("M", text) : parseQuantity(text, dim, positive))]; }
      catch (e) { if (e instanceof CalcError) { return [null, e.message]; } throw e; }
    }
  };

  state = fromFragment(location.hash, location.search);
  root.hidden = false;
  rebuild();
})();
