"""Model files typed: parameters, phases, steps with their shape and count formulas.

Every shape, count and tokens formula goes through the same safe formula engine as a
kernel's, over the model's parameters and the phase's variables, and is evaluated in
every phase here: each must come out a positive whole number, or the error points at
the formula. The step's kernel formulas are then evaluated at each phase's shape, so
a zero or absurd count is caught before any result is computed from it.

Steps name catalog kernels, so a model is typed after every kernel file.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from rooflinec.assemble.builder import Builder, KernelCheck
from rooflinec.assemble.cases import bind_widths
from rooflinec.assemble.kernels import reserved_reason
from rooflinec.assemble.reserve import reserve_share
from rooflinec.assemble.typed import TypedFile
from rooflinec.catalog import (
    DEFAULT_REQUESTS,
    DEFAULT_RESERVE,
    DEPLOYMENT_VARIABLES,
    ONE_CHIP,
    RED,
    ROUTED_KERNEL,
    ROUTED_RANKS,
    ROUTED_SYMBOL,
    Deployment,
    Experts,
    Kernel,
    LedgerTerm,
    MemoryLedger,
    Model,
    ModelMeasured,
    ModelStep,
    NamedDeployment,
    Precision,
    RequestShape,
    ServingResult,
    Speculation,
    model_names,
)
from rooflinec.engine.evaluate import MAX_COUNT, collective_runs, count_problem, width_values
from rooflinec.errors import short_number
from rooflinec.formulas import WIDTH, EvaluationError, Formula, FormulaError
from rooflinec.formulas.substitute import substituted
from rooflinec.loader import Document, PathKey
from rooflinec.quantities import Dimension, QuantityError, parse_quantity

#: The key of a phase that is not a run variable: its speculation.
SPECULATION_KEY = "speculation"

MAX_SHAPE = 10**15  # as a case's shape values
MAX_STEP_COUNT = 10**9  # runs of one step in one pass
DEFAULT_TOKENS = "b*s"


class _Memo:
    """What one model's steps repeat (the same formula texts over the same names, the
    same kernel at the same shape in several steps and phases), done once. Only what
    succeeded is kept: a problem is reported at every place it occurs."""

    def __init__(self, kernels: set[KernelCheck]) -> None:
        self.formulas: dict[str, Formula] = {}
        self.routed: dict[str, Formula] = {}  # `X` as the experts bind it (engine formulas)
        self.values: dict[tuple[str, int, int], dict[str, int]] = {}
        self.kernels = kernels  # the build's own: shared by its models


def build_model(
    builder: Builder,
    doc: Document,
    kernels: dict[str, Kernel],
    precisions: dict[str, Precision],
) -> Model | None:
    """A model with every formula evaluated in every phase, or None when it has errors."""
    data = doc.data
    typed = TypedFile(builder, doc, "model")
    parameters: dict[str, int] = data["parameters"]
    phases, speculation = _phases(builder, doc, data["phases"])
    _check_names(builder, doc, parameters, phases)
    names = model_names(parameters, phases)
    builder.precision_ref(doc, ("precision",), data["precision"], precisions)
    tokens_text = data.get("tokens", DEFAULT_TOKENS)
    tokens = _formula(builder, doc, ("tokens",), tokens_text, names)
    tokens_by_phase: dict[str, int | Fraction] = {}
    if tokens is not None:
        # The default b*s needs b and s: say so at `phases`, not at a field not written.
        path: PathKey = ("tokens",) if "tokens" in data else ("phases",)
        tokens_by_phase = dict(_per_phase(builder, doc, path, tokens, parameters, phases, "tokens"))
        for phase, spec in speculation.items():
            # A verify pass yields b sequences' tokens per verify pass, not b*s.
            tokens_by_phase[phase] = phases[phase]["b"] * spec.tokens_per_verify
    steps: list[ModelStep] = []
    seen: dict[str, int] = {}
    memo = _Memo(builder.kernel_checks)
    experts = _experts(builder, doc, parameters)
    routed = (
        None
        if experts is None
        else (
            experts.binding(tokens_text if tokens else DEFAULT_TOKENS),
            experts.routing == "uniform",
        )
    )
    ranks = None if experts is None else (experts.ranks, experts.routing == "uniform")
    for i, entry in enumerate(data["steps"]):
        step = _step(
            builder,
            doc,
            i,
            entry,
            names,
            parameters,
            phases,
            kernels,
            precisions,
            seen,
            memo,
            routed,
            ranks,
        )
        if step is not None:
            steps.append(step)
    sources = builder.sources(doc)
    measured = _measured(builder, doc, phases, sources, precisions)
    serving = _serving(builder, doc, sources, precisions)
    memory = _memory(builder, doc, names, parameters, phases, precisions)
    deployments = _deployments(builder, doc)
    requests = _requests(doc)
    finished = typed.finish()
    if finished is None or tokens is None:
        return None
    if len(steps) < len(data["steps"]):
        # A step names a kernel or precision from a file that failed: the model cannot be
        # built whole, and nothing is wrong in it. Refused without an error of its own, so
        # that examples naming it or its steps are skipped, not reported as dangling.
        builder.refuse(data["id"], ())
        return None
    _, versions = finished
    return Model(
        data["id"],
        data["name"],
        data["description"],
        data["precision"],
        dict(parameters),
        {name: dict(values) for name, values in phases.items()},
        tokens,
        tokens_by_phase,
        tuple(steps),
        measured,
        sources,
        tuple(data.get("assumptions") or ()),
        versions,
        doc,
        memory,
        deployments,
        requests,
        experts,
        speculation,
        serving,
    )


def _phases(
    builder: Builder, doc: Document, raw: dict[str, dict[str, Any]]
) -> tuple[dict[str, dict[str, int]], dict[str, Speculation]]:
    """The phases' run variables, and the phases that are verify passes of speculative
    decoding (`speculation: {k, acceptance}`, the one key of a phase that is not a run
    variable): such a phase runs s = k + 1 tokens and has a batch b."""
    phases: dict[str, dict[str, int]] = {}
    speculation: dict[str, Speculation] = {}
    for name, values in raw.items():
        phases[name] = {k: v for k, v in values.items() if k != SPECULATION_KEY}
        given = values.get(SPECULATION_KEY)
        if given is None:
            continue
        spec = Speculation(given["k"], Fraction(given["acceptance"]))
        s, b = phases[name].get("s"), phases[name].get("b")
        if s != spec.k + 1 or b is None:
            builder.error(
                doc,
                ("phases", name, SPECULATION_KEY),
                f"a verify pass of k = {spec.k} drafted tokens runs s = {spec.k + 1} tokens of"
                f" b sequences: phase '{name}' has s = {s}"
                + ("" if b is not None else " and no b"),
                code="models",
            )
            continue
        speculation[name] = spec
    return phases, speculation


def _experts(builder: Builder, doc: Document, parameters: dict[str, int]) -> Experts | None:
    """The model's `experts:`, its numbers read from the parameters they name."""
    raw = doc.data.get("experts")
    if raw is None:
        return None
    values: dict[str, int] = {}
    texts: dict[str, str] = {}
    for key, default in (("count", None), ("active", None), ("shared", 0)):
        given = raw.get(key, default)
        if isinstance(given, str):
            if given not in parameters:
                known = ", ".join(sorted(parameters))
                builder.error(
                    doc,
                    ("experts", key),
                    f"'{given}' is not a parameter of this model (parameters: {known})",
                    code="models",
                )
                return None
            values[key], texts[key] = parameters[given], given
        else:
            values[key], texts[key] = int(given), ""
    if values["active"] > values["count"]:
        builder.error(
            doc,
            ("experts", "active"),
            f"{values['active']} experts per token of {values['count']}: at most all of them",
            code="models",
        )
        return None
    return Experts(
        values["count"],
        values["active"],
        values["shared"],
        raw.get("routing", "spread"),
        texts["count"],
        texts["active"],
    )


def _check_names(
    builder: Builder, doc: Document, parameters: dict[str, int], phases: dict[str, dict[str, int]]
) -> None:
    """No reserved name, and no phase variable that is also a parameter."""
    for name in parameters:
        _reserved_name(builder, doc, ("parameters", name), name)
    for phase, values in phases.items():
        for name in values:
            _reserved_name(builder, doc, ("phases", phase, name), name)
            if name in parameters:
                builder.error(
                    doc,
                    ("phases", phase, name),
                    f"'{name}' is both a parameter and a variable of phase '{phase}':"
                    " give it one meaning",
                    key=True,
                    code="models",
                )


def _reserved_name(builder: Builder, doc: Document, path: PathKey, name: str) -> None:
    reason = reserved_reason(name)
    if name in DEPLOYMENT_VARIABLES:
        reason = "it is a deployment variable (1 on one chip)"
    if name == ROUTED_RANKS:
        reason = "it is the chips a token's experts lie on, bound by the model's `experts:`"
    if reason is not None:
        builder.error(
            doc,
            path,
            f"'{name}' is reserved: {reason}; choose another name",
            key=True,
            code="formula",
        )


def _formula(
    builder: Builder,
    doc: Document,
    path: PathKey,
    raw: Any,
    names: list[str],
    memo: _Memo | None = None,
) -> Formula | None:
    """A shape, count or tokens formula: a whole number written as such, or formula text."""
    text = str(raw) if isinstance(raw, int) else raw
    hit = memo.formulas.get(text) if memo is not None else None
    if hit is None:
        hit = builder.formula(doc, path, text, names, reserved=())
        if hit is not None and memo is not None:
            memo.formulas[text] = hit
    return hit


def _routed_formula(
    builder: Builder, doc: Document, path: PathKey, text: str, names: list[str], memo: _Memo
) -> Formula | None:
    """The formula of `X` that `Experts.binding` writes (it may call `unpicked`), parsed
    once per model."""
    from rooflinec.formulas import parse_formula

    hit = memo.routed.get(text)
    if hit is not None:
        return hit
    try:
        hit = memo.routed[text] = parse_formula(text, names, reserved=(), engine=True)
    except FormulaError as exc:
        builder.error(doc, path, f"experts: {exc.message}", code="models")
    return hit


def _per_phase(
    builder: Builder,
    doc: Document,
    path: PathKey,
    formula: Formula,
    parameters: dict[str, int],
    phases: dict[str, dict[str, int]],
    what: str,
    *,
    limit: int = MAX_SHAPE,
    memo: _Memo | None = None,
    least: int = 1,
    whole: bool = True,
) -> dict[str, int]:
    """The formula's value in every phase; each problem reported at the formula, once.
    `least` is 0 for a collective's count (`pp - 1` is 0 on one stage: no step);
    `whole` false for a value that may be a fraction (`X` under uniform routing)."""
    if memo is not None:
        hit = memo.values.get((formula.text, limit, least))
        if hit is not None:
            return hit
    out: dict[str, Any] = {}
    for phase, values in phases.items():
        problem = None
        offset = 0
        try:
            # Checked on one chip here; another deployment is checked where it is asked for.
            value = formula.evaluate({**parameters, **values, **ONE_CHIP.variables()})
        except (EvaluationError, FormulaError) as exc:
            if exc.token is not None and exc.token in formula.symbols:
                problem = f"phase '{phase}' gives no value for '{exc.token}'"
            else:
                problem = exc.message
            offset = exc.column
        else:
            if whole and value.denominator != 1:
                problem = f"{formula.text} = {short_number(value)}, not a whole number"
            elif value < least:
                problem = f"{formula.text} = {short_number(value)}: it must be {least} or more"
            elif value > limit:
                problem = f"{formula.text} = {short_number(value)} is implausibly large"
            else:
                out[phase] = int(value) if value.denominator == 1 else value
        if problem is not None:
            builder.error(
                doc, path, f"{what} in phase '{phase}': {problem}", offset=offset, code="models"
            )
            return {}
    if memo is not None:
        memo.values[formula.text, limit, least] = out
    return out


def _step(
    builder: Builder,
    doc: Document,
    index: int,
    entry: dict[str, Any],
    names: list[str],
    parameters: dict[str, int],
    phases: dict[str, dict[str, int]],
    kernels: dict[str, Kernel],
    precisions: dict[str, Precision],
    seen: dict[str, int],
    memo: _Memo,
    routed: tuple[str, bool] | None = None,
    ranks: tuple[str, bool] | None = None,
) -> ModelStep | None:
    """`routed`: the formula of `X` the model's `experts:` binds and whether it may be a
    fraction, for every step of the routed kernel; `ranks`: the same for the name
    `ranks`, which any step's shape may read (None: the model has no experts)."""
    path: PathKey = ("steps", index)
    errors_before = len(builder.out.errors)
    sid = entry["id"]
    if sid in seen:
        builder.error(
            doc,
            (*path, "id"),
            f"step id '{sid}' is already used by step {seen[sid] + 1} of this model",
            code="ids",
        )
    seen.setdefault(sid, index)
    kernel = kernels.get(entry["kernel"])
    if kernel is None:
        if not builder.broken.covers("kernel", entry["kernel"]):
            known = ", ".join(sorted(kernels)) or "none"
            builder.error(
                doc,
                (*path, "kernel"),
                f"unknown kernel '{entry['kernel']}' (kernels: {known})",
                code="refs",
            )
        # The step's precisions are checked all the same: they do not depend on the kernel.
        for name, pid in (entry.get("widths") or {}).items():
            builder.precision_ref(doc, (*path, "widths", name), pid, precisions, compute=False)
        return None
    if kernel.shared_levels:
        builder.error(
            doc,
            (*path, "kernel"),
            f"kernel '{kernel.id}' reads each device's shared memory per core (smem) in its"
            f" {', '.join(kernel.shared_levels)} traffic: a model's pass is the same on every"
            " device, so its steps take kernels whose counts do not depend on the device",
            code="refs",
        )
        return None
    if entry.get("precision") is not None:
        builder.precision_ref(doc, (*path, "precision"), entry["precision"], precisions)
    widths = bind_widths(
        builder,
        doc,
        (*path, "widths"),
        entry.get("widths"),
        kernel.widths,
        precisions,
        kernel=f"kernel '{kernel.id}'",
    )
    raw_shape: dict[str, Any] = entry["shape"]
    fractional: frozenset[str] = frozenset()
    if kernel.id != ROUTED_KERNEL:
        routed = None  # the model's experts bind the routed kernel's X alone
    if routed is not None:
        if ROUTED_SYMBOL in raw_shape:
            builder.error(
                doc,
                (*path, "shape", ROUTED_SYMBOL),
                f"{ROUTED_SYMBOL} of a {ROUTED_KERNEL} step is bound by the model's `experts:`"
                f" ({routed[0]}): drop it here",
                code="shape",
            )
        raw_shape = {**raw_shape, ROUTED_SYMBOL: routed[0]}
        fractional = frozenset([ROUTED_SYMBOL]) if routed[1] else frozenset()
    for symbol in kernel.symbols:
        if symbol not in raw_shape:
            builder.error(
                doc,
                (*path, "shape"),
                f"symbol '{symbol}' of kernel '{kernel.id}' is not bound: give it a formula",
                code="shape",
            )
    shape: dict[str, Formula] = {}
    shapes: dict[str, dict[str, int]] = {phase: {} for phase in phases}
    written: dict[str, str] = {}
    # A model's experts bind `ranks` for its shapes and counts to read (a count is refused)
    readable = names if ranks is None else [*names, ROUTED_RANKS]
    for symbol, raw in raw_shape.items():
        at: PathKey = (*path, "shape", symbol)
        if builder.unknown_symbol(doc, at, symbol, kernel.symbols, f"kernel '{kernel.id}'"):
            continue
        bound = symbol == ROUTED_SYMBOL and routed is not None
        formula = (
            _routed_formula(builder, doc, (*path, "kernel"), raw, names, memo)
            if bound
            else _formula(builder, doc, at, raw, readable, memo)
        )
        if ranks is not None and formula is not None and ROUTED_RANKS in formula.symbols:
            written[symbol] = formula.text
            text = substituted(formula.text, {ROUTED_RANKS: ranks[0]})
            formula = _routed_formula(builder, doc, at, text, names, memo)
            if ranks[1]:
                fractional |= {symbol}
        if formula is None:
            continue
        shape[symbol] = formula
        values = _per_phase(
            builder,
            doc,
            (*path, "kernel") if bound else at,
            formula,
            parameters,
            phases,
            f"{symbol} (bound by the model's experts)" if bound else f"{symbol}",
            memo=memo,
            whole=symbol not in fractional,
        )
        for phase, value in values.items():
            shapes[phase][symbol] = value
    count = _formula(builder, doc, (*path, "count"), entry.get("count", 1), readable, memo)
    if count is not None and ROUTED_RANKS in count.symbols:
        builder.error(
            doc,
            (*path, "count"),
            f"'{ROUTED_RANKS}' may be a fraction of a chip: a shape may read it, a count not",
            code="models",
        )
        count = None
    counts: dict[str, int] = {}
    if count is not None:
        counts = _per_phase(
            builder,
            doc,
            (*path, "count"),
            count,
            parameters,
            phases,
            "count",
            limit=MAX_STEP_COUNT,
            memo=memo,
            least=0 if kernel.collective is not None else 1,
        )
    if len(builder.out.errors) > errors_before or count is None:
        return None
    if any(pid not in precisions for pid in widths.values()):
        return None  # precisions.yaml failed: the widths' bytes are not known
    # A collective of one chip (or none) is not evaluated: on one chip, no bundled one is.
    active = {
        phase: shape
        for phase, shape in shapes.items()
        if kernel.collective is None or collective_runs(shape, counts[phase])
    }
    _evaluate_kernel(builder, doc, path, kernel, active, widths, precisions, memo)
    if len(builder.out.errors) > errors_before:
        return None
    return ModelStep(
        sid,
        entry.get("name") or sid,
        entry.get("description"),
        kernel.id,
        shape,
        count,
        entry.get("precision"),
        widths,
        shapes,
        counts,
        doc.locate(path),
        fractional,
        written,
    )


def _evaluate_kernel(
    builder: Builder,
    doc: Document,
    path: PathKey,
    kernel: Kernel,
    shapes: dict[str, dict[str, int]],
    widths: dict[str, str],
    precisions: dict[str, Precision],
    memo: _Memo,
) -> None:
    """The kernel's formulas at each phase's shape: positive and plausible, at every width
    (once for each kernel, shape and width binding that passed)."""
    all_widths = sorted({p.bytes for p in precisions.values()}) or [Fraction(1)]
    formulas = [] if kernel.collective is not None else [("operation count", kernel.flops)]
    formulas += [(f"{level} byte count", f) for level, f in kernel.bytes.items()]
    bound = tuple(widths.items())
    at_width = [width_values(kernel.widths, w, widths, precisions) for w in all_widths]
    # The symbols that take the width: w and every width symbol no precision binds.
    varying = {name: 1 for name in at_width[0] if widths.get(name) not in precisions}
    ends = sorted({0, len(all_widths) - 1})
    # A count of degree at most 1 in the width lies between its values at the narrowest
    # and the widest width: plausible at both ends, it is at every width between (one
    # failing at an end is then tried width by width, so that the message names the
    # narrowest failing width, as always).
    linear = [bool(f.reserved) and _at_most_linear(f.degree(varying)) for _, f in formulas]
    for phase, shape in shapes.items():
        key = (kernel.id, tuple(shape.items()), bound)
        if key in memo.kernels:
            continue
        for (what, formula), at_ends in zip(formulas, linear, strict=True):
            if at_ends and _passes(formula, shape, at_width, ends):
                continue
            for i in range(len(all_widths)) if formula.reserved else range(1):
                w = all_widths[i]
                values: dict[str, int | Fraction] = {**shape, **at_width[i], RED: 1}
                try:
                    result = formula.evaluate(values)
                except (EvaluationError, FormulaError) as exc:
                    problem = exc.message
                else:
                    size = count_problem(result)
                    if size is None:
                        continue
                    problem = f"{size} ({short_number(result)} with w={w})"
                builder.error(
                    doc,
                    (*path, "shape"),
                    f"in phase '{phase}', kernel '{kernel.id}': the {what} {problem}",
                    code="models",
                )
                return
        memo.kernels.add(key)


def _at_most_linear(degree: int | None) -> bool:
    return degree is not None and degree <= 1


def _passes(
    formula: Formula,
    shape: dict[str, int],
    at_width: list[dict[str, int | Fraction]],
    indices: list[int],
) -> bool:
    """Whether `formula` at `shape` is a plausible count at each width of `indices`."""
    for i in indices:
        try:
            result = formula.evaluate({**shape, **at_width[i], RED: 1})
        except (EvaluationError, FormulaError):
            return False
        if count_problem(result) is not None:
            return False
    return True


def _deployments(builder: Builder, doc: Document) -> dict[str, NamedDeployment]:
    """The named deployments, each a split that is one (`Deployment.problem`); the device
    and its domain are checked once the devices are known (`rooflinec.assemble.references`)."""
    out: dict[str, NamedDeployment] = {}
    for name, entry in (doc.data.get("deployments") or {}).items():
        path: PathKey = ("deployments", name)
        deployment = Deployment(
            entry.get("tp", 1), entry.get("pp", 1), entry.get("ep", 1), entry.get("chips")
        )
        problem = deployment.problem()
        if problem is not None:
            builder.error(doc, path, f"deployment '{name}': {problem}", key=True, code="models")
            continue
        out[name] = NamedDeployment(
            name, entry["device"], deployment, entry.get("note"), doc.locate(path)
        )
    return out


def _requests(doc: Document) -> dict[str, RequestShape]:
    """The named request shapes (the schema checked each is whole tokens in range), or the
    defaults when the spec names none."""
    named = doc.data.get("requests")
    if not named:
        return dict(DEFAULT_REQUESTS)
    return {name: RequestShape(entry["input"], entry["output"]) for name, entry in named.items()}


def _measured(
    builder: Builder,
    doc: Document,
    phases: dict[str, dict[str, int]],
    sources: dict[str, Any],
    precisions: dict[str, Precision],
) -> tuple[ModelMeasured, ...]:
    out: list[ModelMeasured] = []
    for j, m in enumerate(doc.data.get("measured") or []):
        if SERVING_KEYS & m.keys():
            continue  # a serving result (`_serving`)
        path: PathKey = ("measured", j)
        builder.source_ref(doc, (*path, "source"), m["source"], sources)
        builder.precision_ref(doc, (*path, "precision"), m["precision"], precisions)
        if m["phase"] not in phases:
            builder.error(
                doc,
                (*path, "phase"),
                f"unknown phase '{m['phase']}' (phases: {', '.join(phases)})",
                code="refs",
            )
            continue
        parsed = builder.quantity(doc, (*path, "time"), m["time"], Dimension.TIME)
        if parsed is None:
            continue
        out.append(
            ModelMeasured(
                m["device"],
                m["phase"],
                m["precision"],
                parsed[0],
                m["time"],
                m["source"],
                m.get("note"),
                doc.locate(path),
            )
        )
    return tuple(out)


# The keys that make a `measured` entry a serving result (the schema's `if`).
SERVING_KEYS = frozenset({"input", "output"})
_SERVING_DIMENSIONS = {
    "ttft": Dimension.TIME,
    "itl": Dimension.TIME,
    "output_rate": Dimension.TOKEN_RATE,
    "user_rate": Dimension.TOKEN_RATE,
    "energy": Dimension.ENERGY,
}


def _serving(
    builder: Builder,
    doc: Document,
    sources: dict[str, Any],
    precisions: dict[str, Precision],
) -> tuple[ServingResult, ...]:
    """The `measured` entries with `input` and `output`: serving results, each figure
    parsed with its unit (greater than zero), the deployment a split that is one and the KV
    cache no narrower than the precision the bound counts it at."""
    out: list[ServingResult] = []
    for j, m in enumerate(doc.data.get("measured") or []):
        if not SERVING_KEYS & m.keys():
            continue
        path: PathKey = ("measured", j)
        before = len(builder.out.errors)
        builder.source_ref(doc, (*path, "source"), m["source"], sources)
        builder.precision_ref(doc, (*path, "precision"), m["precision"], precisions)
        kv = m.get("kv")
        if kv is not None:
            builder.precision_ref(doc, (*path, "kv"), kv, precisions, compute=False)
            at, cache = precisions.get(m["precision"]), precisions.get(kv)
            if at is not None and cache is not None and cache.bytes < at.bytes:
                builder.error(
                    doc,
                    (*path, "kv"),
                    f"a KV cache at {kv} is narrower than the precision {m['precision']}, which"
                    " the bound counts it at: the bound would not be one (give the precision"
                    f" {kv}, or leave kv out)",
                    code="measured",
                )
        deployment = Deployment(m.get("tp", 1), m.get("pp", 1), m.get("ep", 1), m.get("chips"))
        problem = deployment.problem()
        if problem is not None:
            builder.error(doc, path, f"serving result {j}: {problem}", code="measured")
        metrics: dict[str, Fraction] = {}
        texts: dict[str, str] = {}
        for name, dimension in _SERVING_DIMENSIONS.items():
            if name not in m:
                continue
            parsed = builder.quantity(doc, (*path, name), m[name], dimension)
            if parsed is not None:
                metrics[name], texts[name] = parsed[0], str(m[name])
        if "concurrency" in m and "batch" in m:
            builder.error(
                doc,
                (*path, "batch"),
                "a serving result has a concurrency (requests kept in flight) or a static"
                " batch (requests that start and finish together), not both",
                code="measured",
            )
        spec = m.get("speculation")
        if spec is not None and m.get("technique") is None:
            builder.error(
                doc,
                (*path, "speculation"),
                "a draft (speculation) belongs to a technique: name it in `technique`",
                code="measured",
            )
        if len(builder.out.errors) > before:
            continue
        out.append(
            ServingResult(
                m["device"],
                deployment,
                m["precision"],
                kv,
                m["input"],
                m["output"],
                m.get("concurrency"),
                m.get("batch"),
                m["engine"],
                metrics,
                texts,
                m.get("technique"),
                None if spec is None else Speculation(spec["k"], Fraction(1)),
                tuple(m.get("assumed") or ()),
                m["source"],
                m["quote"],
                m.get("note"),
                doc.locate(path),
                j,
            )
        )
    return tuple(out)


# ---------------------------------------------------------------------- memory ledger

# A term written as a number followed by a unit is a quantity (`6.56 MB`), not a formula.
_QUANTITY = re.compile(r"\s*[0-9][0-9.,_ \u00a0\u2009\u202f]*[A-Za-zµ%]")
LEDGER_TERMS = ("weights", "kv", "kv_per_token", "activations")


def _memory(
    builder: Builder,
    doc: Document,
    names: list[str],
    parameters: dict[str, int],
    phases: dict[str, dict[str, int]],
    precisions: dict[str, Precision],
) -> MemoryLedger | None:
    """The `memory:` ledger, every term checked in every phase at every width on one chip:
    a byte count that is not positive (activations: negative) is an error at its formula."""
    raw: dict[str, Any] | None = doc.data.get("memory")
    if raw is None:
        return None
    errors_before = len(builder.out.errors)
    path: PathKey = ("memory",)
    widths: dict[str, str] = dict(raw.get("widths") or {})
    for name, pid in widths.items():
        reason = reserved_reason(name)
        if name in names or name == "kv_per_token" or reason is not None:
            builder.error(
                doc,
                (*path, "widths", name),
                f"width symbol '{name}' is already a name of this model's formulas"
                f" ({reason or 'a parameter, variable or ledger term'}); choose another name",
                key=True,
                code="widths",
            )
        builder.precision_ref(doc, (*path, "widths", name), pid, precisions, compute=False)
    reserved = (WIDTH, *widths)
    terms: dict[str, LedgerTerm | None] = {}
    for term in LEDGER_TERMS:
        symbols = [*names, "kv_per_token"] if term == "kv" and "kv_per_token" in raw else names
        terms[term] = _term(builder, doc, (*path, term), raw.get(term), symbols, reserved)
    reserve, reserve_text = _reserve(builder, doc, (*path, "reserve"), raw.get("reserve"))
    if len(builder.out.errors) > errors_before or terms["weights"] is None:
        return None
    if any(pid not in precisions for pid in widths.values()):
        return None  # precisions.yaml failed: the widths' bytes are not known
    ledger = MemoryLedger(
        terms["weights"],
        terms["kv"],
        terms["kv_per_token"],
        terms["activations"],
        reserve,
        reserve_text,
        widths,
        doc.locate(path),
    )
    _check_ledger(builder, doc, ledger, parameters, phases, precisions)
    return None if len(builder.out.errors) > errors_before else ledger


def _term(
    builder: Builder,
    doc: Document,
    path: PathKey,
    raw: Any,
    names: list[str],
    reserved: tuple[str, ...],
) -> LedgerTerm | None:
    """A ledger term: a quantity of bytes with its unit, or a formula counting bytes."""
    if raw is None:
        return None
    text = str(raw) if isinstance(raw, int) else raw
    if _QUANTITY.match(text):
        allow_zero = path[-1] == "activations"
        try:
            q = parse_quantity(text, Dimension.BYTES, positive=not allow_zero)
        except QuantityError as exc:
            message = exc.message + (f" ({exc.hint})" if exc.hint else "")
            builder.error(doc, path, f"{path[-1]}: {message}", offset=exc.column, code="units")
            return None
        return LedgerTerm(text, None, q.value, doc.locate(path))
    formula = builder.formula(doc, path, text, names, reserved=reserved)
    if formula is None:
        return None
    return LedgerTerm(text, formula, None, doc.locate(path))


def _reserve(builder: Builder, doc: Document, path: PathKey, raw: Any) -> tuple[Fraction, str]:
    """The share of a chip's memory held back: a per cent from 0 up to, not including, 100."""
    if raw is None:
        return DEFAULT_RESERVE, "10%"
    return reserve_share(builder, doc, path, raw), str(raw)


def _check_ledger(
    builder: Builder,
    doc: Document,
    ledger: MemoryLedger,
    parameters: dict[str, int],
    phases: dict[str, dict[str, int]],
    precisions: dict[str, Precision],
) -> None:
    """Each formula term in every phase at every precision's width, on one chip."""
    all_widths = sorted({p.bytes for p in precisions.values()}) or [Fraction(1)]
    bound = {name: precisions[pid].bytes for name, pid in ledger.widths.items()}
    default_kv = ledger.kv is None and ledger.kv_per_token is not None
    for term_name in LEDGER_TERMS:
        term: LedgerTerm | None = getattr(ledger, term_name)
        if term is None or term.formula is None:
            continue
        path: PathKey = ("memory", term_name)
        formula = term.formula
        for phase, values in phases.items():
            if default_kv and term_name == "kv_per_token":
                missing = [v for v in ("b", "L") if v not in values]
                if missing:
                    builder.error(
                        doc,
                        path,
                        f"phase '{phase}' gives no value for '{missing[0]}': the cache is"
                        " b*L*kv_per_token (write `kv:` for another form)",
                        code="models",
                    )
                    return
            problem = _term_problem(
                formula,
                {**parameters, **values, **ONE_CHIP.variables()},
                all_widths,
                bound,
                ledger,
                zero=term_name == "activations",
            )
            if problem is not None:
                message, offset = problem
                builder.error(
                    doc,
                    path,
                    f"{term_name} in phase '{phase}': {message}",
                    offset=offset,
                    code="models",
                )
                return


def _term_problem(
    formula: Formula,
    values: dict[str, int],
    all_widths: list[Fraction],
    bound: dict[str, Fraction],
    ledger: MemoryLedger,
    *,
    zero: bool,
) -> tuple[str, int] | None:
    """Why a ledger formula is no byte count at these values (at some width), or None."""
    for w in all_widths if formula.reserved else all_widths[:1]:
        scope: dict[str, int | Fraction] = {**values, WIDTH: w, **bound}
        if "kv_per_token" in formula.symbols and ledger.kv_per_token is not None:
            try:
                scope["kv_per_token"] = ledger.kv_per_token.evaluate(scope)
            except (EvaluationError, FormulaError):
                return None  # reported at kv_per_token itself
        try:
            value = formula.evaluate(scope)
        except (EvaluationError, FormulaError) as exc:
            if exc.token is not None and exc.token in formula.symbols:
                return f"no value for '{exc.token}'", exc.column
            return exc.message, exc.column
        if value < 0 or (value == 0 and not zero):
            return f"{formula.text} = {short_number(value)} B with w={w}: it must be more than 0", 0
        if value > MAX_COUNT:
            return f"{formula.text} = {short_number(value)} B is implausibly large", 0
    return None
