"""Memory fit: a model's `memory:` ledger per chip against a device's DRAM capacity.

Per model, phase, precision and deployment the ledger holds, per chip and exactly:

- `weights`: the spec's formula (every expert counted, layers divided by `pp`);
- `kv_cache`: the spec's `kv` formula over `b` and `L`, else `b*L*kv_per_token`, else 0;
- `activations`: a quantity per sequence times `b`, a formula as written, or the rule
  (`activation_rule`): per sequence, the largest step's inputs and outputs of one run,
  the bytes its kernel moves at the compute width `w` with every other width symbol
  (weights `wb`, the cache `wkv`) at 0, at the phase's `b` and `s` with `L = s` (the
  cached keys are `kv`'s), divided by `b`; times `b`. Layers run in turn, so one step's
  buffers are live at a time;
- `reserve`: the ledger's share (default 10 %) of the capacity, held for the framework;

and `fits` is total <= capacity. `max_batch` is the largest `b` that fits at the phase's
`L`, `max_context` the largest `L` at the phase's `b`, each found exactly: in closed form
when the ledger is linear in them (the default cache and per-sequence activations), else
by an exponential then bisecting search over the integers, which needs the ledger to grow
with `b` and `L` (every bundled form does; a test checks the property). `needs_chips` is
the fewest chips, tp = chips and pp = 1, tried at 1, 2, 4, ... 1024, at which it fits.

A device without a DRAM capacity has no `fits` (None): nothing is claimed either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ParamSpec

from rooflinec.catalog import ONE_CHIP, Deployment, MemoryLedger, Model
from rooflinec.formulas import WIDTH, EvaluationError, Formula, FormulaError

if TYPE_CHECKING:
    from rooflinec.catalog import Catalog, Device

__all__ = [
    "CHIP_DEGREES",
    "MAX_SEARCH",
    "Ledger",
    "LedgerTerms",
    "MemoryEngine",
    "MemoryFit",
    "activation_rule",
    "device_capacity",
    "evaluate_fit",
    "largest_batch_at",
    "largest_cache_batch",
    "ledger_terms",
]

#: The chip counts `needs_chips` tries (tp = chips, pp = 1).
CHIP_DEGREES: tuple[int, ...] = tuple(2**i for i in range(11))
#: The largest batch or context searched (as a shape value's limit).
MAX_SEARCH = 10**15
LEDGER_KEYS = ("weights", "kv_cache", "activations", "reserve", "total", "capacity")
NO_L_NOTE = "every L fits: no term of the ledger depends on L"


class InvalidDeployment(Exception):
    """A step's shape or a ledger formula has no whole value at this deployment."""


@dataclass(frozen=True)
class Ledger:
    """Bytes per chip; `reserve` and `capacity` are None on a device with no capacity."""

    weights: Fraction
    kv_cache: Fraction
    activations: Fraction
    reserve: Fraction | None
    total: Fraction
    capacity: Fraction | None

    def as_dict(self) -> dict[str, Fraction | None]:
        return {key: getattr(self, key) for key in LEDGER_KEYS}


@dataclass(frozen=True)
class MemoryFit:
    """A row's ledger and what follows from it (on a device without a capacity, the
    ledger alone: the rest None)."""

    ledger: Ledger
    fits: bool | None = None
    max_batch: int | None = None  # None: even b = 1 does not fit (or no capacity, or no b)
    max_context: int | None = None  # None: L = 1 does not fit, or every L fits (see the note)
    max_context_note: str | None = None
    needs_chips: int | None = None  # fewest chips (tp) that fit when this does not; None: none


def device_capacity(device: Device) -> Fraction | None:
    """The DRAM capacity of one chip, B, or None when the spec gives none."""
    dram = device.memory.get("dram")
    if dram is None or dram.capacity is None:
        return None
    return dram.capacity.per_chip


def _whole(value: Fraction) -> int:
    if value.denominator != 1 or value <= 0:
        raise InvalidDeployment(str(value))
    return value.numerator


def activation_rule(
    catalog: Catalog,
    model: Model,
    scope: dict[str, int | Fraction],
    precision: str,
) -> Fraction:
    """The largest step's inputs and outputs of one run, B per chip (see the module).

    Every step's shape first: a degree that leaves one of them not whole is no deployment
    (`InvalidDeployment`), found before any kernel's bytes are."""
    runs = []
    for step in model.steps:
        kernel = catalog.kernels[step.kernel]
        formula = kernel.bytes.get("dram")
        if formula is None:
            continue
        fractional = step.fractional
        shape = tuple([(name, _at(f, scope, name in fractional)) for name, f in step.shape.items()])
        runs.append((formula, shape, step.precision or precision, tuple(kernel.widths)))
    best = Fraction(0)
    for formula, shape, width_of, others in runs:
        width = catalog.precisions[width_of].bytes
        found = _activation_bytes(formula, shape, width.numerator, width.denominator, others)
        if found > best:
            best = found
    return best


def _at(formula: Formula, scope: dict[str, int | Fraction], fraction: bool = False) -> int:
    """A shape formula's whole value (the same formula over the same values, once); a
    positive fraction where `fraction` allows one (`ModelStep.fractional`)."""
    text = formula.text
    names = _NAMES.get(text)
    if names is None:
        names = _NAMES[text] = tuple(sorted(formula.symbols))
    values = tuple([scope[n] for n in names])
    hit = _SHAPES.get((text, values))
    if hit is None:
        if len(_SHAPES) >= _KEPT:
            _SHAPES.clear()
        at = dict(zip(names, values, strict=True))
        value = formula.evaluate(at)
        found: int | Fraction
        found = value if fraction and value > 0 and value.denominator != 1 else _whole(value)
        hit = _SHAPES[text, values] = found
    return hit  # type: ignore[return-value]  # a Fraction only where one may be


# What the activation rule finds, by each formula's text (the same text is the same
# formula, whatever spec it is in) rather than by the formula, whose hash is a Python
# call over its fields: several per step of every rule. Each cleared when full.
_KEPT = 1 << 14
_NAMES: dict[str, tuple[str, ...]] = {}  # a formula's symbols, sorted
_SHAPES: dict[tuple[str, tuple[int | Fraction, ...]], int | Fraction] = {}  # by the symbols' values
_BYTES: dict[tuple[str, tuple[tuple[str, int], ...], int, int, tuple[str, ...]], Fraction] = {}


def _activation_bytes(
    formula: Formula,
    shape: tuple[tuple[str, int], ...],
    width_n: int,
    width_d: int,
    others: tuple[str, ...],
) -> Fraction:
    """A kernel's bytes at `shape` with `w` = `width_n / width_d` and its other widths at
    0 (the width by its integers: a Fraction's hash is a modular inverse, per step)."""
    key = (formula.text, shape, width_n, width_d, others)
    hit = _BYTES.get(key)
    if hit is None:
        values: dict[str, int | Fraction] = {
            **dict(shape),
            WIDTH: Fraction(width_n, width_d),
            **dict.fromkeys(others, 0),
        }
        if len(_BYTES) >= _KEPT:
            _BYTES.clear()
        hit = _BYTES[key] = formula.evaluate(values)
    return hit


#: Activation rules per sequence already found, by (model, precision, deployment, run),
#: None where a shape needs the run's own L: phases that differ in L alone share one (a
#: `MemoryEngine` owns one such memo).
RuleMemo = dict[
    tuple[str, str, Deployment, tuple[tuple[str, int | Fraction], ...]], Fraction | None
]


def _rule_per_sequence(
    catalog: Catalog,
    model: Model,
    scope: dict[str, int | Fraction],
    run: dict[str, int],
    precision: str,
    deployment: Deployment,
    rules: RuleMemo | None,
) -> Fraction:
    """The rule per sequence: at the run's b and s with L = s (the keys of the new tokens
    alone: the cached ones are the ledger's `kv`), over b. So it depends on neither L nor
    (for steps whose shapes grow with b*s, as every bundled one's do) on b."""
    at = dict(scope)
    if "L" in run and "s" in run:
        at["L"] = run["s"]
    kept: RuleMemo = {} if rules is None else rules
    per = run.get("b", 1)
    key = (model.id, precision, deployment, tuple(sorted({**run, "L": at.get("L", 0)}.items())))
    if key not in kept:
        try:
            kept[key] = activation_rule(catalog, model, at, precision) / per
        except (InvalidDeployment, EvaluationError, FormulaError, ZeroDivisionError):
            kept[key] = None  # a shape needs the run's own L: the rule is this run's alone
    found = kept[key]
    if found is not None:
        return found
    own = (model.id, precision, deployment, (("~own L", 1), *sorted(run.items())))
    rule = kept.get(own)
    if rule is None:
        rule = kept[own] = activation_rule(catalog, model, scope, precision) / per
    return rule


class _Terms:
    """A ledger's terms for one model, run, precision and deployment, as functions of
    `b` and `L` (everything else bound)."""

    def __init__(
        self,
        catalog: Catalog,
        model: Model,
        ledger: MemoryLedger,
        run: dict[str, int],
        precision: str,
        deployment: Deployment,
        rules: RuleMemo | None = None,
        *,
        full: bool = True,
    ) -> None:
        """`full`: false for the weights and kv cache alone (no activations, no `at`): a
        lower bound on the ledger, which is all `_needs_chips` reads of most degrees."""
        self.ledger = ledger
        self.run = run
        self._lower: dict[tuple[int, int], Fraction] = {}
        self._per: dict[tuple[str, int], Fraction] = {}  # `per_batch`, `per_context`
        scope: dict[str, int | Fraction] = {**model.parameters, **run, **deployment.variables()}
        scope[WIDTH] = catalog.precisions[precision].bytes
        for name, pid in ledger.widths.items():
            scope[name] = catalog.precisions[pid].bytes
        self.scope = scope
        try:
            self.weights = ledger.weights.evaluate(scope)
            self.per_sequence: Fraction | None = None  # activations per sequence, if so
            act = ledger.activations
            if act is None and full:
                self.per_sequence = _rule_per_sequence(
                    catalog, model, scope, run, precision, deployment, rules
                )
            elif act is not None and act.value is not None:
                self.per_sequence = act.value
            kvpt = ledger.kv_per_token
            # b*L*kv_per_token with a kv_per_token that does not vary with them: linear
            self.per_token: Fraction | None = None
            if ledger.kv is None:
                if kvpt is None:
                    self.per_token = Fraction(0)
                elif not kvpt.symbols & {"b", "L"}:
                    self.per_token = kvpt.evaluate(scope)
            # The terms at the run's own b and L, which every device's fit reads: kept.
            self.b, self.L = run.get("b", 1), run.get("L", 1)
            self.kv = self.kv_at(self.b, self.L)
            if not full:
                return
            self.activations = self.activations_at(self.b, self.L)
            self.used = self.weights + self.kv + self.activations
        except (EvaluationError, FormulaError, ZeroDivisionError) as exc:
            raise InvalidDeployment(str(exc)) from exc

    def at(self, b: int, L: int) -> tuple[Fraction, Fraction, Fraction]:
        """The kv cache, the activations and the ledger's sum without the reserve."""
        if (b, L) == (self.b, self.L):
            return self.kv, self.activations, self.used
        kv, act = self.kv_at(b, L), self.activations_at(b, L)
        return kv, act, self.weights + kv + act

    def lower(self, b: int, L: int) -> Fraction:
        """The weights and the kv cache at `b` and `L`: a lower bound on the ledger's sum
        without the reserve (activations only add), kept per (b, L)."""
        hit = self._lower.get((b, L))
        if hit is None:
            hit = self._lower[b, L] = self.weights + self.kv_at(b, L)
        return hit

    def per_batch(self, L: int) -> Fraction:
        """The bytes one more sequence adds at `L` (linear terms), kept per L: the same
        for every capacity the terms are fitted to."""
        hit = self._per.get(("b", L))
        if hit is None:
            assert self.per_token is not None and self.per_sequence is not None
            hit = self._per["b", L] = L * self.per_token + self.per_sequence
        return hit

    def per_context(self, b: int) -> tuple[Fraction, Fraction]:
        """The activations of `b` sequences and the bytes one more key adds to them
        (linear terms), kept per b."""
        sequences = self._per.get(("s", b))
        tokens = self._per.get(("L", b))
        if sequences is None or tokens is None:
            assert self.per_token is not None and self.per_sequence is not None
            sequences = self._per["s", b] = b * self.per_sequence
            tokens = self._per["L", b] = b * self.per_token
        return sequences, tokens

    @property
    def linear(self) -> bool:
        return self.per_token is not None and self.per_sequence is not None

    def line_in_b(self, L: int) -> tuple[Fraction, Fraction] | None:
        """The kv cache and the activations at `L` as held + b × per, where they are a
        line in b though not in L (a spec's `kv` of degree one in b, as a window's
        min(L, W) writes it, and activations per sequence); None elsewhere."""
        kv = self.ledger.kv
        if self.per_sequence is None or kv is None or kv.formula is None:
            return None
        degree = kv.formula.degree({"b": 1})
        if degree is None or degree > 1:
            return None
        held = self.kv_at(0, L)
        return held, self.kv_at(1, L) - held + self.per_sequence

    def _at(self, b: int, L: int) -> dict[str, int | Fraction]:
        return {**self.scope, "b": b, "L": L}

    def kv_at(self, b: int, L: int) -> Fraction:
        if self.per_token is not None:
            return b * L * self.per_token
        values = self._at(b, L)
        kvpt = self.ledger.kv_per_token
        if kvpt is not None:
            values["kv_per_token"] = kvpt.evaluate(values)
        if self.ledger.kv is None:
            return b * L * Fraction(values["kv_per_token"])
        return self.ledger.kv.evaluate(values)

    def activations_at(self, b: int, L: int) -> Fraction:
        if self.per_sequence is not None:
            return b * self.per_sequence
        assert self.ledger.activations is not None
        return self.ledger.activations.evaluate(self._at(b, L))

    def varies_with_L(self) -> bool:
        """Whether some term of the ledger grows with L."""
        if self.linear:
            return self.per_token != 0
        ledger = self.ledger
        if ledger.kv is None and ledger.kv_per_token is not None:
            return True  # b*L*kv_per_token
        terms = (ledger.kv, ledger.kv_per_token, ledger.activations)
        return any("L" in t.symbols for t in terms if t is not None)


def _largest(fits: Callable[[int], bool]) -> int | None:
    """The largest n in 1..MAX_SEARCH with fits(n), for a `fits` true up to some n and
    false after it; None when fits(1) is false (MAX_SEARCH when all fit)."""
    if not fits(1):
        return None
    low = 1  # fits
    high = 2
    while high <= MAX_SEARCH and fits(high):
        low, high = high, high * 2
    if high > MAX_SEARCH:
        if fits(MAX_SEARCH):
            return MAX_SEARCH
        high = MAX_SEARCH
    while high - low > 1:  # fits(low), not fits(high)
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return low


def _floor_or_none(room: Fraction, per: Fraction) -> int | None:
    """The largest n >= 1 with n * per <= room, capped at MAX_SEARCH; None when n = 1
    does not fit (`per` > 0). Compared and divided as integers: room / per = top / bottom
    with bottom > 0 (one per row and capacity: Fraction arithmetic is Python code)."""
    top = room.numerator * per.denominator
    bottom = room.denominator * per.numerator
    if top < bottom:
        return None
    return min(top // bottom, MAX_SEARCH)


def evaluate_fit(
    catalog: Catalog,
    model: Model,
    phase: str,
    precision: str,
    capacity: Fraction | None,
    deployment: Deployment = ONE_CHIP,
    *,
    run: dict[str, int] | None = None,
    ledger: MemoryLedger | None = None,
    needs: bool = True,
    terms: _Terms | None = None,
    terms_at: Callable[[Deployment, bool], _Terms | None] | None = None,
) -> MemoryFit | None:
    """The ledger of `model`'s `phase` (or of the variables `run` instead of the phase's)
    at `precision` and `deployment` against `capacity` (B per chip); None when the model
    has no ledger (`ledger` stands in for the model's) or the deployment is not one."""
    ledger = ledger if ledger is not None else model.memory
    if ledger is None:
        return None
    values = dict(model.phases[phase]) if run is None else dict(run)
    if terms is None:
        terms = ledger_terms(catalog, model, ledger, values, precision, deployment)
        if terms is None:
            return None
    b, L = values.get("b", 1), values.get("L", 1)
    kv, act, used = terms.at(b, L)
    if capacity is None:
        return MemoryFit(Ledger(terms.weights, kv, act, None, used, None))
    reserve = ledger.reserve * capacity
    total = used + reserve
    fits = total <= capacity
    room = capacity - reserve - terms.weights
    max_batch = _max_batch(terms, room, L) if "b" in values else None
    max_context, note = _max_context(terms, room, b) if "L" in values else (None, None)
    needs_chips = None
    if not fits and needs:
        if terms_at is None:
            terms_at = _fresh_terms(catalog, model, ledger, values, precision)
        needs_chips = _needs_chips(capacity, values, terms_at)
    return MemoryFit(
        Ledger(terms.weights, kv, act, reserve, total, capacity),
        fits,
        max_batch,
        max_context,
        note,
        needs_chips,
    )


def largest_batch_at(terms: LedgerTerms, capacity: Fraction, L: int) -> int | None:
    """`evaluate_fit(...).max_batch` at `L` on `capacity` (B per chip) from the ledger's
    terms alone: the largest b whose ledger, with the reserve, fits (None: b = 1 does
    not)."""
    if terms.linear:
        # On floats first: the quotient's floor, exact where it lies within 2^-30 of a
        # whole number (or the batch reaches the search's limit), where a float cannot
        # tell which side it falls.
        per = terms.per_batch(L)
        if per > 0:
            room_f = float(capacity) * (1 - float(terms.ledger.reserve)) - float(terms.weights)
            q = room_f / float(per)
            whole = math.floor(q)
            if 1 <= whole < MAX_SEARCH and min(q - whole, whole + 1 - q) > q * 2**-30:
                return whole
    room = capacity - terms.ledger.reserve * capacity - terms.weights
    return _max_batch(terms, room, L)


def largest_cache_batch(terms: LedgerTerms, room: Fraction, L: int) -> int | None:
    """The largest b (to `MAX_SEARCH`) whose KV cache at `L` fits in `room`, B, with no
    reserve and no activations: the most sequences that can be resident beside what
    `room` leaves out (None: one does not fit)."""
    return _largest(lambda b: terms.kv_at(b, L) <= room)


def _max_batch(terms: _Terms, room: Fraction, L: int) -> int | None:
    if terms.linear:
        per = terms.per_batch(L)
        if per == 0:
            return MAX_SEARCH if room >= 0 else None
        return _floor_or_none(room, per)
    line = terms.line_in_b(L)
    if line is not None:
        held, per = line
        if per == 0:
            return MAX_SEARCH if room >= held else None
        return _floor_or_none(room - held, per)
    return _largest(lambda b: terms.kv_at(b, L) + terms.activations_at(b, L) <= room)


def _max_context(terms: _Terms, room: Fraction, b: int) -> tuple[int | None, str | None]:
    if not terms.varies_with_L():
        return None, NO_L_NOTE
    if terms.linear:
        sequences, tokens = terms.per_context(b)
        return _floor_or_none(room - sequences, tokens), None
    found = _largest_rising(lambda L: terms.kv_at(b, L) + terms.activations_at(b, L), room)
    if found == MAX_SEARCH:
        return None, NO_L_NOTE
    return found, None


def _largest_rising(used: Callable[[int], Fraction], room: Fraction) -> int | None:
    """`_largest(lambda n: used(n) <= room)` for a rising `used` that is a line past some
    n (a cache of min(L, W) keys in some layers and L in others): the line through
    `used` at MAX_SEARCH / 2 and MAX_SEARCH gives a guess, kept where the guess fits and
    the next n does not (then it is the answer, as `used` rises); else the search."""
    try:
        top = used(MAX_SEARCH)
        if top <= room:
            return MAX_SEARCH
        half = MAX_SEARCH // 2
        mid = used(half)
        slope = (top - mid) / (MAX_SEARCH - half)
        if slope > 0:
            guess = half + math.floor((room - mid) / slope)
            if 1 <= guess < MAX_SEARCH and used(guess) <= room < used(guess + 1):
                return guess
    except (EvaluationError, ZeroDivisionError):
        pass  # too large to evaluate out there: the search stops short of it
    return _largest(lambda n: used(n) <= room)


def _needs_chips(
    capacity: Fraction,
    run: dict[str, int],
    terms_at: Callable[[Deployment, bool], _Terms | None],
) -> int | None:
    """The fewest chips, tp = chips, whose ledger fits `capacity` at the run's b and L.

    A degree whose weights and kv cache alone, with the reserve, exceed the capacity does
    not fit whatever its activations (which only add): its activation rule, most of a
    ledger's cost, is not found. Each degree's terms and lower bound are the same for
    every capacity (`_Terms.lower`); the reserve, a share of the capacity, is taken off
    the capacity once."""
    b, L = run.get("b", 1), run.get("L", 1)
    room: Fraction | None = None  # the capacity less the reserve: what the sums must fit
    for deployment in _TP_DEGREES:
        least = terms_at(deployment, False)
        if least is None:
            continue  # not a deployment of this model
        if room is None:
            room = capacity - least.ledger.reserve * capacity  # one ledger at every degree
        if least.lower(b, L) > room:
            continue
        terms = terms_at(deployment, True)
        if terms is None:
            continue
        if terms.at(b, L)[2] <= room:
            return deployment.tp
    return None


# The deployments `_needs_chips` tries, made once.
_TP_DEGREES = tuple(Deployment(tp=chips) for chips in CHIP_DEGREES)


LedgerTerms = _Terms
"""A ledger's terms at one run, precision and deployment (`ledger_terms`), which
`evaluate_fit` takes as `terms` to find the fit on any capacity without them again."""


_Args = ParamSpec("_Args")


def _unless_invalid(make: Callable[_Args, _Terms]) -> Callable[_Args, _Terms | None]:
    """`make`, giving None where the deployment is not one of the model's."""

    def made(*args: _Args.args, **kwargs: _Args.kwargs) -> _Terms | None:
        try:
            return make(*args, **kwargs)
        except InvalidDeployment:
            return None

    return made


# The ledger's terms at `run` (None: not a deployment of the model), the same on every
# device: kept by a caller that fits many devices or capacities. `rules`: the activation
# rules found so far (`MemoryEngine.rules`), shared.
ledger_terms = _unless_invalid(_Terms)


def _fresh_terms(
    catalog: Catalog, model: Model, ledger: MemoryLedger, run: dict[str, int], precision: str
) -> Callable[[Deployment, bool], _Terms | None]:
    def at(deployment: Deployment, full: bool) -> _Terms | None:
        return ledger_terms(catalog, model, ledger, run, precision, deployment, full=full)

    return at


# Run variables as a key: (name, value) pairs in name order.
_Point = tuple[tuple[str, int], ...]


class MemoryEngine:
    """The memory fit of every row, each (model, phase, precision, deployment, capacity)
    found once: a device's rows share the ledger with every device of the same capacity."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._fits: dict[
            tuple[str, str, str, Deployment, tuple[int, int] | None], MemoryFit | None
        ] = {}
        self._rules: RuleMemo = {}
        # The activation rules per run and deployment found so far: `ledger_terms` shares
        # them as `rules`
        self.rules = self._rules
        self._fits_at: dict[
            tuple[str, _Point, str, Deployment, tuple[int, int] | None], MemoryFit | None
        ] = {}
        self._terms_at: dict[tuple[str, _Point, str, Deployment, bool], _Terms | None] = {}
        # Each device's capacity and its key (`held`), and each phase's point: read per row.
        self._capacities: dict[str, tuple[Fraction | None, tuple[int, int] | None]] = {}
        self._points: dict[tuple[str, str], _Point] = {}
        self._lower_names: dict[str, frozenset[str]] = {}

    def _capacity(self, device: str) -> tuple[Fraction | None, tuple[int, int] | None]:
        """A device's capacity and the same by its integers, to key by (a Fraction's hash
        is a modular inverse, per row)."""
        hit = self._capacities.get(device)
        if hit is None:
            capacity = device_capacity(self.catalog.devices[device])
            held = None if capacity is None else (capacity.numerator, capacity.denominator)
            hit = self._capacities[device] = (capacity, held)
        return hit

    def fit(
        self,
        model: Model,
        phase: str,
        precision: str,
        device: str,
        deployment: Deployment = ONE_CHIP,
    ) -> MemoryFit | None:
        capacity, held = self._capacity(device)
        key = (model.id, phase, precision, deployment, held)
        if key not in self._fits:
            self._fits[key] = evaluate_fit(
                self.catalog,
                model,
                phase,
                precision,
                capacity,
                deployment,
                terms=self._terms_of(model, phase, precision, deployment),
                terms_at=lambda d, full: self._terms_of(model, phase, precision, d, full),
            )
        return self._fits[key]

    def fit_at(
        self,
        model: Model,
        run: dict[str, int],
        precision: str,
        device: str,
        deployment: Deployment = ONE_CHIP,
    ) -> MemoryFit | None:
        """The ledger at run variables of no named phase (a request's passes), found once
        per (model, run, precision, deployment, capacity) as a phase's is."""
        capacity, held = self._capacity(device)
        point = tuple(sorted(run.items()))
        key = (model.id, point, precision, deployment, held)
        if key not in self._fits_at:

            def terms_at(d: Deployment, full: bool = True) -> _Terms | None:
                return self._run_terms(model, point, precision, d, full)

            self._fits_at[key] = evaluate_fit(
                self.catalog,
                model,
                "",
                precision,
                capacity,
                deployment,
                run=dict(run),
                terms=terms_at(deployment),
                terms_at=terms_at,
            )
        return self._fits_at[key]

    def _run_terms(
        self,
        model: Model,
        point: tuple[tuple[str, int], ...],
        precision: str,
        deployment: Deployment,
        full: bool = True,
    ) -> _Terms | None:
        if not full:
            point = self._lower_point(model, point)
        key = (model.id, point, precision, deployment, full)
        if key not in self._terms_at:
            ledger = model.memory
            self._terms_at[key] = (
                None
                if ledger is None
                else ledger_terms(
                    self.catalog,
                    model,
                    ledger,
                    dict(point),
                    precision,
                    deployment,
                    self._rules,
                    full=full,
                )
            )
        return self._terms_at[key]

    def _lower_point(self, model: Model, point: _Point) -> _Point:
        """The variables of `point` that the weights and the kv cache name: all a ledger's
        lower bound (`_Terms.lower`, which takes its own b and L) reads of it, so every
        phase that agrees on them shares the terms `_needs_chips` reads at each degree."""
        names = self._lower_names.get(model.id)
        if names is None:
            ledger = model.memory
            terms = () if ledger is None else (ledger.weights, ledger.kv, ledger.kv_per_token)
            names = frozenset().union(*(t.symbols for t in terms if t is not None))
            self._lower_names[model.id] = names
        return tuple([item for item in point if item[0] in names])

    def _terms_of(
        self, model: Model, phase: str, precision: str, deployment: Deployment, full: bool = True
    ) -> _Terms | None:
        """The ledger's terms, the same on every device (None: no ledger, or not a
        deployment; `evaluate_fit` then says so itself); without `full`, the weights and
        kv cache alone (see `_needs_chips`)."""
        point = self._points.get((model.id, phase))
        if point is None:
            point = self._points[model.id, phase] = tuple(sorted(model.phases[phase].items()))
        return self._run_terms(model, point, precision, deployment, full)
