/* rooflinec calculator, its exact core: rationals of BigInts, the spec parser's quantities
 * and messages, the safe parser's trees checked and evaluated, the site's rounding, and
 * the roof's tie order. No DOM and no page data: `rooflinecExact(limits)` makes it with
 * the parser's limits (the page passes the build's); `calculator.js` is the page. */
window.rooflinecExact = function (limits) {
  "use strict";

  /* ------------------------------------------------------------ exact rationals */

  var ZERO = BigInt(0), ONE = BigInt(1), TWO = BigInt(2), TEN = BigInt(10);

  function gcd(a, b) {
    if (a < ZERO) { a = -a; }
    if (b < ZERO) { b = -b; }
    while (b !== ZERO) { var t = a % b; a = b; b = t; }
    return a;
  }
  function rat(n, d) {
    if (d === undefined) { d = ONE; }
    if (d < ZERO) { n = -n; d = -d; }
    var g = gcd(n, d);
    if (g > ONE) { n = n / g; d = d / g; }
    return { n: n, d: d };
  }
  function int(v) { return { n: BigInt(v), d: ONE }; }
  function parseRat(text) {
    var parts = String(text).split("/");
    return rat(BigInt(parts[0]), parts.length > 1 ? BigInt(parts[1]) : ONE);
  }
  function add(a, b) { return rat(a.n * b.d + b.n * a.d, a.d * b.d); }
  function sub(a, b) { return rat(a.n * b.d - b.n * a.d, a.d * b.d); }
  function mul(a, b) { return rat(a.n * b.n, a.d * b.d); }
  function div(a, b) { return rat(a.n * b.d, a.d * b.n); }
  function cmp(a, b) {
    var x = a.n * b.d, y = b.n * a.d;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  function isZero(a) { return a.n === ZERO; }
  function floorDiv(n, d) { // d > 0
    var q = n / d;
    return (n % d !== ZERO && n < ZERO) ? q - ONE : q;
  }
  function floor(a) { return int(floorDiv(a.n, a.d)); }
  function ceil(a) { return int(-floorDiv(-a.n, a.d)); }
  function pow(a, e) { return rat(a.n ** BigInt(e), a.d ** BigInt(e)); }
  function pow10(e) { var p = ONE; for (var i = 0; i < e; i++) { p *= TEN; } return p; }
  function ratText(a) { return a.d === ONE ? String(a.n) : a.n + "/" + a.d; }
  function toFloat(a) {
    var n = a.n, d = a.d;
    var big = BigInt("1" + "0".repeat(300));
    while (n > big || -n > big || d > big) { n = n / TEN; d = d / TEN; }
    if (d === ZERO) { return NaN; }
    return Number(n) / Number(d);
  }

  /* --------------------------------------------- messages as the command line quotes */

  // Python's repr() of a string: what the command line's messages quote.
  function pyRepr(s) {
    var quote = s.indexOf("'") >= 0 && s.indexOf('"') < 0 ? '"' : "'";
    var out = quote;
    for (var ch of s) {
      var code = ch.codePointAt(0);
      if (ch === "\\") { out += "\\\\"; }
      else if (ch === quote) { out += "\\" + ch; }
      else if (ch === "\n") { out += "\\n"; }
      else if (ch === "\r") { out += "\\r"; }
      else if (ch === "\t") { out += "\\t"; }
      else if (ch !== " " && /[\p{C}\p{Z}]/u.test(ch)) {
        out += code < 0x100 ? "\\x" + code.toString(16).padStart(2, "0")
          : code < 0x10000 ? "\\u" + code.toString(16).padStart(4, "0")
          : "\\U" + code.toString(16).padStart(8, "0");
      } else { out += ch; }
    }
    return out + quote;
  }
  // A token as a message quotes it: repr-quoted, cut short if very long.
  function shown(token) {
    return pyRepr(token.length > 40 ? token.slice(0, 37) + "..." : token);
  }
  function CalcError(message) { this.message = message; }
  function fail(message, hint) {
    throw new CalcError(hint ? message + "; hint: " + hint : message);
  }
  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  /* -------------------------------------------- quantities, parsed as specs parse them */

  var MAX_LENGTH = 64, MAX_EXPONENT = 30;
  var DIM = {
    rate: ["a compute rate", "989.5 TFLOP/s", "a compute rate is written FLOP/s, FLOPS or FLOPs (OP/s, OPS or OPs for integer work) with a prefix k M G T P E, as in '989.5 TFLOP/s' or '1979 TOPS'"],
    bandwidth: ["a bandwidth", "3.35 TB/s", "a bandwidth is written B/s or Bps with a decimal prefix k M G T P E or a binary prefix Ki Mi Gi Ti Pi Ei, as in '3.35 TB/s' or '800 GiBps'"],
    bytes: ["a size in bytes", "80 GB", "a size is written B with a decimal prefix k M G T P E or a binary prefix Ki Mi Gi Ti Pi Ei, as in '80 GB' or '96 MiB'"],
    time: ["a time", "1.4 ms", "a time is written s, ms, µs (or us), ns or ps, as in '1.4 ms'"],
    share: ["a share", "92%", "a share is written in per cent, as in '92%'"],
    intensity: ["an arithmetic intensity", "295.4 FLOP/B", "an arithmetic intensity is written FLOP/B or OP/B, as in '295.4 FLOP/B'"],
    ops: ["an operation count", "8.6 GFLOP", "an operation count is written FLOP or OP with a prefix k M G T P E, as in '8.6 GFLOP'"],
    power: ["a power", "700 W", "a power is written W with a prefix k M, as in '700 W' or '1.2 kW'"],
    price: ["a price per hour", "2.99 USD/h", "a price is written in US dollars per hour, as in '2.99 USD/h'"],
    "token rate": ["a token rate", "51.67 tokens/s", "a token rate is written tokens/s (prefix k M), as in '51.67 tokens/s'"],
    energy: ["an energy per token", "0.45 J/token", "an energy per token is written J/token (prefix m k), as in '0.45 J/token'"]
  };
  var UNITS = {};
  (function build() {
    var decimal = [["", 0], ["k", 3], ["K", 3], ["M", 6], ["G", 9], ["T", 12], ["P", 15], ["E", 18]];
    var binary = [["Ki", 10], ["Mi", 20], ["Gi", 30], ["Ti", 40], ["Pi", 50], ["Ei", 60]];
    function put(name, dim, factor) { UNITS[name] = { dim: dim, factor: factor }; }
    decimal.forEach(function (p) {
      var f = int(pow10(p[1]));
      ["FLOP/s", "FLOPS", "FLOPs", "FLOP/sec", "OP/s", "OPS", "OPs", "OP/sec"].forEach(function (b) { put(p[0] + b, "rate", f); });
      ["FLOP", "OP"].forEach(function (b) { put(p[0] + b, "ops", f); });
      ["B/s", "Bps", "B/sec"].forEach(function (b) { put(p[0] + b, "bandwidth", f); });
      put(p[0] + "B", "bytes", f);
    });
    binary.forEach(function (p) {
      var f = int(ONE << BigInt(p[1]));
      ["B/s", "Bps", "B/sec"].forEach(function (b) { put(p[0] + b, "bandwidth", f); });
      put(p[0] + "B", "bytes", f);
    });
    [["", 0], ["m", 3], ["µ", 6], ["μ", 6], ["u", 6], ["n", 9], ["p", 12]].forEach(function (p) {
      put(p[0] + "s", "time", rat(ONE, pow10(p[1])));
    });
    put("FLOP/B", "intensity", int(1));
    put("OP/B", "intensity", int(1));
    put("%", "share", rat(ONE, BigInt(100)));
    [["", 0], ["k", 3], ["M", 6]].forEach(function (p) { put(p[0] + "W", "power", int(pow10(p[1]))); });
    put("USD/h", "price", rat(ONE, BigInt(3600)));
    [["", 0], ["k", 3], ["M", 6]].forEach(function (p) { put(p[0] + "tokens/s", "token rate", int(pow10(p[1]))); });
    [["", int(1)], ["m", rat(ONE, BigInt(1000))], ["k", int(1000)]].forEach(function (p) { put(p[0] + "J/token", "energy", p[1]); });
  })();
  var BY_UPPER = {};
  Object.keys(UNITS).forEach(function (u) { (BY_UPPER[u.toUpperCase()] = BY_UPPER[u.toUpperCase()] || []).push(u); });
  var SPACE = /[ \t\u00a0\u2009\u202f]+/y;
  var SPACES = " \t\u00a0\u2009\u202f";
  var NUMBER = /([0-9]+(?:,[0-9]{3})*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?/y;
  var DIGITS = "0123456789";

  function parseQuantity(text, dim, positive) {
    var example = DIM[dim][1];
    if (text.length > MAX_LENGTH) {
      fail("quantity is too long (" + text.length + " characters; at most " + MAX_LENGTH + ")",
        "write just a number and its unit, as in '" + example + "'");
    }
    var start = text.length - text.replace(/^\s+/, "").length;
    var body = text.trim();
    var end = start + body.length;
    if (!body) { fail("empty quantity: expected " + DIM[dim][0] + " such as '" + example + "'"); }
    var parsed = parseNumber(text, start, end, example);
    var value = parsed[0], pos = parsed[1];
    SPACE.lastIndex = pos;
    var space = SPACE.exec(text.slice(0, end));
    if (space) { pos = SPACE.lastIndex; }
    else if (pos === end) {
      fail("missing unit: expected " + DIM[dim][0] + " such as '" + example + "'",
        "units are never implicit: write the unit after the number");
    } else if (text[pos] !== "%") { afterNumber(text, pos, end); }
    var unitText = text.slice(pos, end);
    var unit = Object.prototype.hasOwnProperty.call(UNITS, unitText) ? UNITS[unitText] : null;
    if (!unit) { unknownUnit(text, pos, unitText, dim); }
    if (unit.dim !== dim) { mismatch(unitText, unit, dim); }
    if (unit.dim === "share" && !(value.n > ZERO && cmp(value, int(100)) <= 0)) {
      fail("a sustained share is between 0 and 100 %, got " + pyRepr(text.slice(start, end)),
        isZero(value) ? "0% would remove the ceiling altogether; leave the figure out instead"
          : "a device cannot sustain more than its data-sheet figure");
    }
    if (positive && isZero(value)) {
      fail(DIM[unit.dim][0] + " must be greater than zero, got " + pyRepr(text.slice(start, end)));
    }
    return mul(value, unit.factor);
  }

  function parseNumber(text, start, end, example) {
    var first = text[start];
    if (DIGITS.indexOf(first) < 0) { notANumber(text, start, end, example); }
    NUMBER.lastIndex = start;
    var m = NUMBER.exec(text.slice(0, end));
    var intPart = m[1], frac = m[2], exp = m[3];
    if (intPart.indexOf(",") >= 0) {
      var groups = intPart.split(",");
      if (groups[0].length > 3) {
        fail("misplaced thousands separator: commas group digits by three, as in '1,979'");
      }
      if (groups[0][0] === "0") {
        fail("a number with thousands separators cannot start with 0",
          "the decimal point is written '.', as in '0.5'");
      }
    }
    if (intPart.length > 1 && intPart[0] === "0" && intPart.indexOf(",") < 0) {
      fail("the number " + pyRepr(intPart) + " has a leading zero",
        "write " + (intPart.replace(/^0+/, "") || "0") + ", without it");
    }
    var exponent = 0;
    if (exp !== undefined) {
      var expDigits = exp.replace(/^[+-]/, "").replace(/^0+/, "");
      if (expDigits.length > 2 || Number(expDigits || "0") > MAX_EXPONENT) {
        fail("exponent out of range: at most e+" + MAX_EXPONENT + " and at least e-" + MAX_EXPONENT,
          "use a unit prefix instead, as in '" + example + "'");
      }
      exponent = (exp[0] === "-" ? -1 : 1) * Number(expDigits || "0");
    }
    frac = frac || "";
    var mantissa = BigInt(intPart.replace(/,/g, "") + frac);
    var scale = exponent - frac.length;
    var value = scale >= 0 ? int(mantissa * pow10(scale)) : rat(mantissa, pow10(-scale));
    var pos = NUMBER.lastIndex;
    if (pos < end) { checkNumberEnd(text, pos, end, frac !== "", exp !== undefined, intPart); }
    return [value, pos];
  }

  function checkNumberEnd(text, pos, end, hasFrac, hasExp, intPart) {
    var ch = text[pos], nxt = pos + 1 < end ? text[pos + 1] : "";
    if (DIGITS.indexOf(ch) >= 0 || ch === ",") {
      fail("misplaced thousands separator: commas group digits by three, as in '1,979'");
    }
    if (ch === ".") {
      fail(hasExp ? "the exponent must be a whole number"
        : hasFrac ? "a number has at most one decimal point" : "digits must follow the decimal point");
    }
    if (ch === "_") { fail("underscores are not accepted in numbers", "write 1000 or 1,000"); }
    if ("xXoO".indexOf(ch) >= 0 && intPart === "0" && !hasFrac && !hasExp) {
      fail("only decimal numbers are accepted");
    }
    if ((ch === "e" || ch === "E") && !hasExp && (nxt === "" || "+-".indexOf(nxt) >= 0 || SPACES.indexOf(nxt) >= 0)) {
      fail("the exponent needs digits, as in '1.5e3'");
    }
  }

  function notANumber(text, start, end, example) {
    var first = text[start];
    if (/^[+-]?(?:nan|inf(?:inity)?)\b/i.test(text.slice(start, end))) {
      fail("expected a finite number: NaN and infinity are not quantities");
    }
    if (first === "-" || first === "\u2212") {
      fail("negative numbers are not accepted: a quantity is never negative");
    }
    if (first === "+") { fail("write the number without a '+' sign", "as in '" + example + "'"); }
    if (first === "." && start + 1 < end && DIGITS.indexOf(text[start + 1]) >= 0) {
      fail("write a leading zero before the decimal point, as in '0.5'");
    }
    if (/\p{L}/u.test(first) || first === "%" || first === "/") {
      fail("missing number: expected a number before the unit, as in '" + example + "'");
    }
    fail("expected a number, got " + pyRepr(first), "as in '" + example + "'");
  }

  function afterNumber(text, pos, end) {
    var ch = text[pos];
    if (/\p{L}/u.test(ch)) {
      fail("missing space between the number and the unit",
        "write '" + text.slice(0, pos).trim() + " " + text.slice(pos, end) + "'");
    }
    fail("unexpected character " + pyRepr(ch) + " after the number");
  }

  function unknownUnit(text, pos, unitText, dim) {
    var message = "unknown unit " + pyRepr(unitText);
    if (/[ \t\u00a0\u2009\u202f]/.test(unitText)) {
      var joined = unitText.replace(/[ \t\u00a0\u2009\u202f]/g, "");
      if (UNITS[joined]) { fail(message, "write the unit without spaces: '" + joined + "'"); }
      var head = unitText.split(/[ \t\u00a0\u2009\u202f]+/)[0];
      if (UNITS[head]) {
        fail("unexpected text after the unit: " + pyRepr(unitText.slice(head.length).trim()),
          "a quantity is just a number and its unit; put remarks in a 'note'");
      }
    }
    if (unitText.indexOf("b") >= 0 && UNITS[unitText.replace(/b/g, "B")]) {
      fail(message, "bytes are written B; b would be bits, which only an interconnect's bandwidth" +
        " accepts (did you mean '" + unitText.replace(/b/g, "B") + "'?)");
    }
    var candidates = (BY_UPPER[unitText.toUpperCase()] || []).filter(function (u) { return UNITS[u].dim === dim; });
    if (candidates.length) {
      fail(message, "units are case-sensitive: did you mean " +
        candidates.map(function (u) { return "'" + u + "'"; }).join(" or ") + "?");
    }
    fail(message, DIM[dim][2]);
  }

  function mismatch(unitText, unit, dim) {
    var message = "expected " + DIM[dim][0] + " such as '" + DIM[dim][1] + "', got " +
      DIM[unit.dim][0] + " in '" + unitText + "'";
    if (/FLOPs$/.test(unitText) && dim === "ops") {
      fail(message, "'" + unitText + "' is read as a rate (per second); an operation count is written '" +
        unitText.slice(0, -1) + "'");
    }
    var tries = [unitText + "/s", unitText.replace(/\/s$/, ""), unitText.replace(/ps$/, ""), unitText.replace(/S$/, "")];
    for (var i = 0; i < tries.length; i++) {
      var found = UNITS[tries[i]];
      if (tries[i] !== unitText && found && found.dim === dim) { fail(message, "did you mean '" + tries[i] + "'?"); }
    }
    fail(message, DIM[dim][2]);
  }

  var MAX_SHAPE = BigInt("1000000000000000");
  // A whole number from 1 to `limit` as typed, with the command line's message.
  function parseWhole(name, text, limit, what) {
    var digits = String(limit).length;
    if (!new RegExp("^[1-9][0-9]{0," + (digits - 1) + "}$").test(text) || BigInt(text) > limit) {
      fail(name + " " + shown(text) + " is not " + what + ": a whole number from 1 to " + thousands(limit));
    }
    return int(BigInt(text));
  }
  function parseShape(symbol, text) { return parseWhole(symbol, text, MAX_SHAPE, "a shape value"); }

  /* ------------------------------------------------------- formula trees, evaluated */

  var LIMITS = limits;
  var RESULT_LIMIT = BigInt(LIMITS.result);
  var FUNCTIONS = { min: [2, null], max: [2, null], ceil: [1, 1], floor: [1, 1] };
  // What only the engine writes (a model's routed experts), never spec text.
  var ENGINE_FUNCTIONS = { min: [2, null], max: [2, null], ceil: [1, 1], floor: [1, 1], unpicked: [3, 3], unreached: [3, 3] };
  var MAX_UNPICKED_TOKENS = 65536, MAX_UNPICKED_BITS = 16384, MAX_UNREACHED_ACTIVE = 4096;

  // The tree checked once, node by node, against the parser's limits and whitelist
  // (`engine`: a model's step, which may call the engine's `unpicked` too).
  function checkTree(node, engine) {
    var allowed = engine ? ENGINE_FUNCTIONS : FUNCTIONS;
    var count = 0;
    function visit(n, depth) {
      count += 1;
      if (count > LIMITS.nodes || depth > LIMITS.depth || !Array.isArray(n)) { return false; }
      switch (n[0]) {
        case "n": return n.length === 2 && /^-?[0-9]{1,80}(\/[0-9]{1,80})?$/.test(n[1]);
        case "s": return n.length === 2 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(n[1]);
        case "+": return Array.isArray(n[1]) && n[1].length > 0 && n[1].every(function (t) {
          return Array.isArray(t) && t.length === 2 && (t[0] === 0 || t[0] === 1) && visit(t[1], depth + 1);
        });
        case "*": return Array.isArray(n[1]) && n[1].length > 0 && n[1].every(function (t) {
          return Array.isArray(t) && t.length === 3 && (t[0] === 0 || t[0] === 1) &&
            typeof t[2] === "string" && visit(t[1], depth + 1);
        });
        case "-": return n.length === 2 && visit(n[1], depth + 1);
        case "^": return n.length === 3 && Number.isInteger(n[2]) && n[2] >= 0 &&
          n[2] <= LIMITS.exponent && visit(n[1], depth + 1);
        case "f":
          var arity = Object.prototype.hasOwnProperty.call(allowed, n[1]) ? allowed[n[1]] : null;
          return arity !== null && Array.isArray(n[2]) && n[2].length >= arity[0] &&
            (arity[1] === null || n[2].length <= arity[1]) &&
            n[2].every(function (a) { return visit(a, depth + 1); });
        default: return false;
      }
    }
    return visit(node, 1);
  }

  function evaluate(node, env) {
    switch (node[0]) {
      case "n": return parseRat(node[1]);
      case "s":
        if (!Object.prototype.hasOwnProperty.call(env, node[1])) { fail("unknown symbol " + shown(node[1])); }
        return env[node[1]];
      case "+":
        var acc = null;
        node[1].forEach(function (t) {
          var v = evaluate(t[1], env);
          acc = acc === null ? (t[0] ? rat(-v.n, v.d) : v) : (t[0] ? sub(acc, v) : add(acc, v));
        });
        return acc;
      case "*":
        var prod = null;
        node[1].forEach(function (t) {
          var v = evaluate(t[1], env);
          if (prod === null) { prod = v; return; }
          if (t[0]) {
            if (isZero(v)) { fail("division by zero: " + shown(t[2]) + " is 0"); }
            prod = div(prod, v);
          } else { prod = mul(prod, v); }
        });
        return prod;
      case "-": var x = evaluate(node[1], env); return rat(-x.n, x.d);
      case "^": return pow(evaluate(node[1], env), node[2]);
      case "f":
        var args = node[2].map(function (a) { return evaluate(a, env); });
        if (node[1] === "ceil") { return ceil(args[0]); }
        if (node[1] === "floor") { return floor(args[0]); }
        if (node[1] === "unpicked") { return unpicked(args[0], args[1], args[2]); }
        if (node[1] === "unreached") { return unreached(args[0], args[1], args[2]); }
        var best = args[0];
        for (var i = 1; i < args.length; i++) {
          var c = cmp(args[i], best);
          if (node[1] === "min" ? c < 0 : c > 0) { best = args[i]; }
        }
        return best;
    }
    fail("formula tree node is not one the parser makes");
  }

  // ((E - k) / E) ** n: n tokens, each routed to k of E experts, all miss a given one.
  function unpicked(experts, active, tokens) {
    [experts, active, tokens].forEach(function (v) {
      if (v.d !== ONE) { fail("unpicked takes whole numbers, not " + ratText(v)); }
    });
    var e = experts.n, k = active.n, n = tokens.n;
    if (!(ZERO <= k && k <= e) || e < ONE || n < ZERO) {
      fail("unpicked(" + e + ", " + k + ", " + n + "): needs E >= k >= 0, E >= 1, n >= 0");
    }
    if (n > BigInt(MAX_UNPICKED_TOKENS)) {
      fail("uniform routing over " + thousands(n) + " tokens: computed exactly up to " +
        thousands(MAX_UNPICKED_TOKENS) + " tokens a pass");
    }
    // Exact, as the engine is; past some thousands of digits the page's BigInt gcd would
    // stall the tab, so it says so (the command line computes it).
    if (n * BigInt(e.toString(2).length) > BigInt(MAX_UNPICKED_BITS)) {
      fail("uniform routing over " + thousands(n) + " tokens of " + e + " experts: too many digits " +
        "for the page; rooflinec compile --model gives it exactly");
    }
    return pow(rat(e - k, e), Number(n));
  }

  // C(E - g, k) / C(E, k): a token routed to k of E experts misses all of a given g.
  function unreached(experts, active, group) {
    [experts, active, group].forEach(function (v) {
      if (v.d !== ONE) { fail("unreached takes whole numbers, not " + ratText(v)); }
    });
    var e = experts.n, k = active.n, g = group.n;
    if (!(ZERO <= k && k <= e && ZERO <= g && g <= e && e >= ONE)) {
      fail("unreached(" + e + ", " + k + ", " + g + "): needs E >= k >= 0, E >= g >= 0, E >= 1");
    }
    if (k > BigInt(MAX_UNREACHED_ACTIVE)) {
      fail(thousands(k) + " experts per token: computed exactly up to " +
        thousands(MAX_UNREACHED_ACTIVE));
    }
    if (e - g < k) { return rat(ZERO, ONE); }
    var num = ONE, den = ONE;
    for (var i = ZERO; i < k; i++) { num *= e - g - i; den *= e - i; }
    return rat(num, den);
  }

  function evaluateCount(node, env) {
    var v = evaluate(node, env);
    var mag = v.n < ZERO ? -v.n : v.n;
    if (mag > RESULT_LIMIT * v.d) { fail("result is larger than 10**60 in magnitude"); }
    return v;
  }

  /* ---------------------------------------------------- formatting, as the site prints */

  var PREFIXES = { "-12": "p", "-9": "n", "-6": "µ", "-3": "m", "0": "", "3": "k", "6": "M", "9": "G", "12": "T", "15": "P", "18": "E" };
  var UNPREFIXED = { "": 1, "%": 1, "x": 1, "×": 1, "FLOP/B": 1, "OP/B": 1, "B/B": 1 };

  function decimalExponent(n, d) { // floor(log10(n/d)), n, d > 0
    var guess = Math.floor((n.toString(2).length - d.toString(2).length) * 30103 / 100000);
    while (!atLeastPow10(n, d, guess)) { guess -= 1; }
    while (atLeastPow10(n, d, guess + 1)) { guess += 1; }
    return guess;
  }
  function atLeastPow10(n, d, e) {
    var s = pow10(Math.abs(e));
    return e >= 0 ? n >= d * s : n * s >= d;
  }
  function roundSignificant(x, digits) { // x > 0: [mantissa BigInt, exponent]
    var exponent = decimalExponent(x.n, x.d) - digits + 1;
    var n = x.n, d = x.d;
    if (exponent >= 0) { d *= pow10(exponent); } else { n *= pow10(-exponent); }
    var mantissa = n / d, rest = n % d;
    if (TWO * rest > d || (TWO * rest === d && mantissa % TWO === ONE)) { mantissa += ONE; }
    if (mantissa === pow10(digits)) { mantissa /= TEN; exponent += 1; }
    while (mantissa % TEN === ZERO) { mantissa /= TEN; exponent += 1; }
    return [mantissa, exponent];
  }
  function decimal(mantissa, exponent) {
    var digits = String(mantissa);
    var lead = exponent + digits.length - 1;
    if (lead < -6 || lead > 20) {
      return digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") + "e" + lead;
    }
    if (exponent >= 0) { return digits + "0".repeat(exponent); }
    var shift = -exponent;
    var padded = digits.padStart(shift + 1, "0");
    return padded.slice(0, -shift) + "." + padded.slice(-shift);
  }
  function join(number, prefix, unit) { return prefix || unit ? number + " " + prefix + unit : number; }
  function formatSI(x, unit, digits) {
    digits = digits || 4;
    if (isZero(x)) { return join("0", "", unit); }
    var sign = x.n < ZERO ? "-" : "";
    var r = roundSignificant(x.n < ZERO ? rat(-x.n, x.d) : x, digits);
    var lead = r[1] + String(r[0]).length - 1;
    var power;
    var f3 = Math.floor(lead / 3) * 3;
    if (UNPREFIXED[unit]) { power = 0; }
    else if (unit === "s") { power = Math.min(Math.max(f3, -12), 0); }
    else { power = Math.min(Math.max(f3, 0), 18); }
    if (!(lead - power >= -6 && lead - power <= 20)) { power = 0; }
    return join(sign + decimal(r[0], r[1] - power), PREFIXES[String(power)], unit);
  }
  function formatNumber(x, digits) {
    if (isZero(x)) { return "0"; }
    var sign = x.n < ZERO ? "-" : "";
    var r = roundSignificant(x.n < ZERO ? rat(-x.n, x.d) : x, digits || 4);
    return sign + decimal(r[0], r[1]);
  }
  function formatPercent(x, digits) { return formatNumber(mul(x, int(100)), digits || 3) + "%"; }
  // Every digit of a finite decimal, else null (as `exact_decimal`).
  function exactDecimal(x) {
    var d = x.d, twos = 0, fives = 0;
    while (d % TWO === ZERO) { d /= TWO; twos += 1; }
    while (d % BigInt(5) === ZERO) { d /= BigInt(5); fives += 1; }
    if (d !== ONE) { return null; }
    var places = Math.max(twos, fives);
    var scaled = mul(x, int(pow10(places))).n;
    var digits = String(scaled < ZERO ? -scaled : scaled).padStart(places + 1, "0");
    var whole = places ? digits.slice(0, -places) : digits;
    var fracPart = places ? digits.slice(-places).replace(/0+$/, "") : "";
    return (x.n < ZERO ? "-" : "") + whole + (fracPart ? "." + fracPart : "");
  }
  // A figure as an input holds it, exactly: '989.5 TFLOP/s', '3.35 TB/s', '92%'.
  function exactText(x, unit) {
    if (unit === "%") { return exactDecimal(mul(x, int(100))) + "%"; }
    var power = 0;
    if (!isZero(x)) {
      var lead = decimalExponent(x.n, x.d);
      power = unit === "s" ? Math.min(Math.max(Math.floor(lead / 3) * 3, -12), 0)
        : Math.min(Math.max(Math.floor(lead / 3) * 3, 0), 18);
    }
    var scaled = power >= 0 ? div(x, int(pow10(power))) : mul(x, int(pow10(-power)));
    var text = exactDecimal(scaled);
    return text === null ? null : text + " " + PREFIXES[String(power)] + unit;
  }
  /* ------------------------------------------------------------------ the roof */

  // The longest of the times: compute, then the levels in order, then the floor, each
  // winning only when strictly longer (the method's tie order).
  function slowest(compute, levels, floor, floors) {
    var best = compute, limit = "compute";
    levels.forEach(function (l) { if (cmp(l[1], best) > 0) { best = l[1]; limit = l[0]; } });
    (floors || (floor ? [["latency", floor]] : [])).forEach(function (f) {
      if (cmp(f[1], best) > 0) { best = f[1]; limit = f[0]; }
    });
    return { time: best, limit: limit };
  }

  return {
    CalcError: CalcError,
    MAX_SHAPE: MAX_SHAPE,
    ONE: ONE,
    TWO: TWO,
    ZERO: ZERO,
    add: add,
    checkTree: checkTree,
    cmp: cmp,
    div: div,
    evaluate: evaluate,
    evaluateCount: evaluateCount,
    exactText: exactText,
    fail: fail,
    floor: floor,
    formatNumber: formatNumber,
    formatPercent: formatPercent,
    formatSI: formatSI,
    int: int,
    isZero: isZero,
    join: join,
    mul: mul,
    parseQuantity: parseQuantity,
    parseRat: parseRat,
    parseShape: parseShape,
    parseWhole: parseWhole,
    rat: rat,
    ratText: ratText,
    shown: shown,
    slowest: slowest,
    thousands: thousands,
    toFloat: toFloat,
  };
};
