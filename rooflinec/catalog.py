"""The catalog: typed, frozen objects for precisions, devices, kernels and method notes.

Everything here is exact (`Fraction` in SI base units) and cross-referenced; it is
what the compiler, the site and the exports read. Building it from documents is
`rooflinec.assemble`'s job.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from rooflinec.errors import Location
from rooflinec.formulas.limits import SHARED_MEMORY

if TYPE_CHECKING:
    from rooflinec.formulas import Formula
    from rooflinec.grid_values import Grid
    from rooflinec.loader import Document

LEVELS: tuple[str, ...] = ("dram", "l2", "l1")
LEVEL_NAMES = {"dram": "DRAM", "l2": "last on-chip level (L2)", "l1": "L1"}
LEVEL_SHORT_NAMES = {"dram": "DRAM", "l2": "L2", "l1": "L1"}  # table headers, chart labels
Counting = Literal["FLOP", "OP"]
INTERCONNECT_ROLES: tuple[str, ...] = ("scale_up", "scale_out")
INTERCONNECT_NAMES = {"scale_up": "scale-up fabric", "scale_out": "scale-out network"}
Direction = Literal["bidirectional", "per-direction", "unstated"]
# The deployment variables every model formula may use; 1 on one chip.
DEPLOYMENT_VARIABLES: tuple[str, ...] = ("tp", "pp", "ep", "dp")
# The collective kernels a kernel spec may declare itself (`collective:`).
COLLECTIVES: tuple[str, ...] = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send")
# The factor a collective's bytes are written with, bound per interconnect level by the engine.
RED = "red"


@dataclass(frozen=True)
class Deployment:
    """How many chips run a model and how it is split over them.

    `tp` chips share every layer (tensor parallelism), `pp` stages hold a share of the
    layers each (pipeline parallelism), `ep` chips of one stage spread the experts of a
    mixture-of-experts layer (expert parallelism), and the `dp` = chips / (tp × pp)
    replicas serve batches of their own. `chips` defaults to lcm(tp, ep) × pp, the
    fewest that hold such a split. `problem()` says why a combination is not one.
    """

    tp: int = 1
    pp: int = 1
    ep: int = 1
    chips: int | None = None  # None: lcm(tp, ep) × pp

    @property
    def total(self) -> int:
        """The chips of the deployment."""
        return self.chips if self.chips is not None else math.lcm(self.tp, self.ep) * self.pp

    @property
    def dp(self) -> int:
        return self.total // (self.tp * self.pp)

    def problem(self) -> str | None:
        """Why these degrees are not a deployment, or None when they are."""
        for name, value in (("tp", self.tp), ("pp", self.pp), ("ep", self.ep)):
            if value < 1:
                return f"{name} = {value}: a degree is 1 or more"
        chips = self.total
        if chips < 1:
            return f"chips = {chips}: a deployment has 1 chip or more"
        if chips % (self.tp * self.pp):
            return f"chips = {chips} is not a multiple of tp × pp = {self.tp * self.pp}"
        if (self.tp * self.dp) % self.ep:
            return (
                f"ep = {self.ep} does not divide tp × dp = {self.tp * self.dp},"
                " the chips of one pipeline stage"
            )
        return None

    def variables(self) -> dict[str, int]:
        """The values of `DEPLOYMENT_VARIABLES`."""
        return {"tp": self.tp, "pp": self.pp, "ep": self.ep, "dp": self.dp}


ONE_CHIP = Deployment()


@dataclass(frozen=True)
class Precision:
    id: str
    label: str
    bytes: Fraction  # per value, exactly (a block-scaled format's shared scale included)
    unit: Counting
    description: str | None
    location: Location
    # As written for a block-scaled format: the bits of a value's own encoding, and the
    # scale its block shares (bits, values per scale); None where `bytes` was written
    bits: Fraction | None = None
    scale: tuple[int, int] | None = None
    width_only: bool = False  # a storage format no peak is given for
    source: str | None = None  # an id of `precisions.yaml`'s `sources`
    quote: str | None = None


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    publisher: str
    url: str
    read: str
    published: str | None
    kind: Literal["vendor", "third-party", "measurement"] | None
    note: str | None
    location: Location
    tool: str | None = None  # a measurement's profiler and its version
    command: str | None = None  # a measurement's command line, to run it again


@dataclass(frozen=True)
class Alternative:
    """Another printed value for the same figure, from another source."""

    value: Fraction
    text: str
    sparsity: str | None
    pipe: str | None
    source: str
    quote: str | None
    note: str | None
    location: Location
    chips: int = 1  # the printed value covers this many chips

    @property
    def dense(self) -> Fraction:
        """Per chip, and halved when printed with 2:4 sparsity."""
        per_chip = self.value / self.chips
        return per_chip / 2 if self.sparsity == "2:4" else per_chip


@dataclass(frozen=True)
class Figure:
    """A data-sheet figure as printed, with where it comes from."""

    value: Fraction  # as printed, SI base units
    text: str  # as written in the spec, e.g. "1979 TFLOP/s"
    source: str
    quote: str | None
    note: str | None
    alternatives: tuple[Alternative, ...]
    location: Location
    counts: Counting | None = None
    binary: bool = False
    chips: int = 1  # the printed value covers a card, package or system of this many chips
    bits: bool = False  # printed in bits (b/s): a link's bandwidth only; `value` is in B/s

    @property
    def per_chip(self) -> Fraction:
        """The printed value divided among the chips it covers (the device is one chip)."""
        return self.value / self.chips


@dataclass(frozen=True)
class Peak:
    precision: str
    figure: Figure
    sparsity: str | None
    pipe: str | None

    @property
    def dense(self) -> Fraction:
        """The dense rate: a figure printed with 2:4 sparsity is halved."""
        per_chip = self.figure.per_chip
        return per_chip / 2 if self.sparsity == "2:4" else per_chip


@dataclass(frozen=True)
class MemoryLevel:
    role: str  # dram, l2, l1
    label: str
    bandwidth: Figure
    capacity: Figure | None
    sustained: Fraction | None  # overrides the device's memory share
    note: str | None


@dataclass(frozen=True)
class Version:
    version: int
    date: str
    change: str


@dataclass(frozen=True)
class Expectation:
    output: str
    case: str | None
    level: str | None
    value: Fraction | int | str  # SI value, a count, or a bound name
    text: str  # as written
    tolerance: Fraction  # relative
    location: Location
    tolerance_at: Location | None = None  # where an explicit `tolerance:` is written
    tolerance_path: str = ""  # its JSON path
    step: str | None = None  # in an example about a model: the step (None: the pass)
    symbol: str | None = None  # for a crossover: the case's symbol varied
    index: int = 0  # its place in the example's `expect` list as written


@dataclass(frozen=True)
class ExampleFabric:
    """An interconnect level another tool assumed, as an example states it (sustained)."""

    per_direction: Fraction  # B/s per chip and direction (a bidirectional figure halved)
    domain: int | None  # the most chips it joins; None: any group
    topology: Literal["switched", "mesh", "torus"] | None
    in_network: bool  # the switch reduces
    latency: Fraction | None  # s, the least time of one collective; None: none


@dataclass(frozen=True)
class ExampleFigures:
    """Ceilings an example runs on instead of a catalog device's: another tool's figures."""

    name: str
    peak: Fraction  # OP/s at the example's precision
    bandwidths: dict[str, Fraction]  # B/s per level
    latency: Fraction | None  # s per launch; None: no floor
    interconnect: dict[str, ExampleFabric] = field(default_factory=dict)  # by role


@dataclass(frozen=True)
class ExampleMemory:
    """An example's settings of a model's memory ledger: another tool's capacity, its
    activations per sequence and reserve, and run variables beside the phase's."""

    capacity: Fraction | None  # B per chip; None: the device's
    activations: Fraction | None  # B per sequence; None: the model's
    activations_text: str | None
    reserve: Fraction | None  # None: the model's
    variables: dict[str, int]


@dataclass(frozen=True)
class Example:
    """A reference example: inputs from the catalog, expected outputs with tolerance."""

    id: str
    name: str
    description: str | None
    device: str
    precision: str
    cases: tuple[str, ...]
    expect: tuple[Expectation, ...]
    owner: str  # the spec file's id
    location: Location
    model: str | None = None  # the model (with `phase`) the expectations are about
    phase: str | None = None
    figures: ExampleFigures | None = None  # instead of `device` ("" then)
    memory: ExampleMemory | None = None  # settings of the model's memory ledger
    deployment: Deployment | None = None  # the model's split over chips; None: one chip
    routing: str | None = None  # the experts' routing in place of the model's own


@dataclass(frozen=True)
class Launch:
    """The least time one kernel launch takes on a device: the latency floor."""

    latency: Fraction  # s
    text: str  # as written, e.g. "2 µs"
    source: str
    note: str | None
    location: Location


@dataclass(frozen=True)
class Core:
    """One compute core of a device (an SM, a compute unit, a core): the shared memory
    its thread blocks' tiles live in, which a tiled kernel's traffic can depend on
    (`rooflinec.formulas.SHARED_MEMORY`). Per core, never the chip's sum."""

    label: str  # the vendor's name for the core: SM, CU, core
    shared_memory: int  # B per core, the most one core can give to its blocks
    text: str  # as written, e.g. "228 KiB"
    source: str
    quote: str | None
    note: str | None
    location: Location


@dataclass(frozen=True)
class Quoted:
    """A fabric's figure beside its bandwidth (domain, latency, sustained share), which may
    cite its own source; `source` None means the level's own."""

    value: Fraction  # chips for a domain, s for a latency, a fraction for a share
    text: str  # as written
    source: str | None
    quote: str | None
    note: str | None
    location: Location


@dataclass(frozen=True)
class Fabric:
    """One interconnect level of a chip (`scale_up` or `scale_out`), as printed.

    `bandwidth` is the figure as the source prints it (bits already converted, exactly:
    `400 Gb/s` is 50 GB/s); `direction` says what it counts. A `bidirectional` figure sums
    both directions, so one direction gets half (as a 2:4 peak is halved); an `unstated`
    one is taken as printed, which keeps a time computed from it a lower bound.
    """

    role: str  # scale_up, scale_out
    label: str
    bandwidth: Figure
    direction: Direction
    domain: Quoted | None  # the most chips this fabric joins
    topology: Literal["switched", "mesh", "torus"] | None
    reduction: Literal["in-network"] | None
    latency: Quoted | None  # the least measured time of one collective, s
    sustained: Quoted | None  # the measured share of the per-direction bandwidth
    note: str | None

    @property
    def per_direction(self) -> Fraction:
        """Per chip and per direction, B/s: a bidirectional figure is halved."""
        per_chip = self.bandwidth.per_chip
        return per_chip / 2 if self.direction == "bidirectional" else per_chip

    @property
    def share(self) -> Fraction:
        """The sustained share of the per-direction bandwidth; 1 (as printed) when unmeasured."""
        return self.sustained.value if self.sustained is not None else Fraction(1)

    @property
    def sustained_per_direction(self) -> Fraction:
        """Per chip and per direction with the sustained share applied, B/s."""
        return self.per_direction * self.share

    @property
    def chips(self) -> int | None:
        """The domain's chip count, when the spec gives one."""
        return int(self.domain.value) if self.domain is not None else None


@dataclass(frozen=True)
class Power:
    """The power the vendor prints for the part, with its kind as printed."""

    value: Fraction  # W
    text: str
    kind: Literal["TDP", "TBP", "TGP", "max"]
    source: str
    quote: str | None
    note: str | None
    location: Location
    chips: int = 1  # the printed power covers a card or package of this many chips

    @property
    def per_chip(self) -> Fraction:
        """The printed power divided among the chips it covers (the device is one chip), W."""
        return self.value / self.chips


@dataclass(frozen=True)
class Price:
    """An on-demand price per chip-hour, from a provider's own page on `date`."""

    value: Fraction  # USD/s (SI inside; written per hour)
    text: str
    date: str
    source: str
    quote: str | None
    note: str | None
    location: Location

    @property
    def per_hour(self) -> Fraction:
        """US dollars per chip-hour."""
        return self.value * 3600


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    vendor: str
    kind: str | None
    form_factor: str | None
    description: str | None
    peaks: dict[str, Peak]
    memory: dict[str, MemoryLevel]
    compute_share: Fraction
    memory_share: Fraction
    sustained_note: str | None
    sources: dict[str, Source]
    assumptions: tuple[str, ...]
    versions: tuple[Version, ...]
    examples: tuple[Example, ...]
    document: Document = field(repr=False, compare=False)
    family: str | None = None  # architecture or product family, for grouping
    form: str | None = None  # SXM, PCIe, OAM, card, module, SoC, chip, wafer
    launch: Launch | None = None  # the latency floor; None: no floor
    interconnect: dict[str, Fabric] = field(default_factory=dict)  # role -> level
    power: Power | None = None
    price: Price | None = None
    core: Core | None = None  # one core's shared memory; None: not quoted

    def peak(self, precision: str) -> Fraction:
        """Sustained dense peak in OP/s."""
        return self.peaks[precision].dense * self.compute_share

    def bandwidth(self, level: str) -> Fraction:
        """Sustained bandwidth of a memory level in B/s."""
        mem = self.memory[level]
        share = mem.sustained if mem.sustained is not None else self.memory_share
        return mem.bandwidth.per_chip * share

    def share_of(self, level: str) -> Fraction:
        mem = self.memory[level]
        return mem.sustained if mem.sustained is not None else self.memory_share

    def link_bandwidth(self, role: str) -> Fraction:
        """Sustained bandwidth of an interconnect level per chip and per direction, B/s."""
        return self.interconnect[role].sustained_per_direction


@dataclass(frozen=True)
class Measured:
    """A measured run of a case on a device at a precision.

    `time`, `flops` and `bytes` cover `launches` launches (the profiler's sums); one run
    of the case is `Case.launches` launches, so per run they are scaled by
    `Case.launches / launches`. `flops` and `bytes` are what a profiler counted; absent,
    the kernel's formulas stand in.
    """

    device: str
    precision: str
    rate: Fraction | None  # OP/s
    time: Fraction | None  # s
    text: str
    source: str | None
    note: str | None
    location: Location
    flops: Fraction | None = None  # OP, counted
    bytes: dict[str, Fraction] = field(default_factory=dict)  # level -> B, counted
    launches: int | None = None  # launches the counts cover; None: one run of the case


@dataclass(frozen=True)
class Case:
    id: str
    name: str
    description: str | None
    kernel: str
    precision: str
    shape: dict[str, int]
    measured: tuple[Measured, ...]
    location: Location
    launches: int = 1  # kernel launches one run of the case takes (the latency floor's count)
    # A grid case stands for every shape of its grid (`shape` is then the grid's first,
    # for what needs one shape); it has no cells of its own: `rooflinec.engine.grids` expands it.
    grid: Grid | None = None
    widths: dict[str, str] = field(default_factory=dict)  # width symbol -> precision id bound


@dataclass(frozen=True)
class Kernel:
    id: str
    name: str
    description: str
    symbols: dict[str, str]
    flops: Formula
    bytes: dict[str, Formula]
    cases: tuple[Case, ...]
    sources: dict[str, Source]
    assumptions: tuple[str, ...]
    versions: tuple[Version, ...]
    examples: tuple[Example, ...]
    document: Document = field(repr=False, compare=False)
    # Width symbols beside w (name -> meaning): each is w unless a case or step binds it.
    widths: dict[str, str] = field(default_factory=dict)
    # A collective's kind (`COLLECTIVES`): bytes under `scale_up` with `red`, no cases.
    collective: str | None = None

    @property
    def shared_levels(self) -> tuple[str, ...]:
        """The levels whose traffic reads one core's shared memory (`smem`): on a device
        that quotes none they are no ceiling."""
        return tuple(lv for lv, f in self.bytes.items() if SHARED_MEMORY in f.symbols)


@dataclass(frozen=True)
class MethodFormula:
    name: str
    formula: Formula
    meaning: str


@dataclass(frozen=True)
class Method:
    id: str
    title: str
    summary: str
    symbols: dict[str, str]
    formulas: tuple[MethodFormula, ...]
    data: dict[str, Any]  # the prose sections as validated plain data
    sources: dict[str, Source]
    versions: tuple[Version, ...]
    examples: tuple[Example, ...]
    document: Document = field(repr=False, compare=False)
    # The formulas of the models section: how steps add up to a forward pass.
    model_formulas: tuple[MethodFormula, ...] = ()


@dataclass(frozen=True)
class ModelStep:
    """One kernel of a model's pass: its shape and count as formulas, and their values
    in every phase (checked positive whole numbers when the model was built)."""

    id: str
    name: str
    description: str | None
    kernel: str
    shape: dict[str, Formula]  # kernel symbol -> formula over parameters and phase variables
    count: Formula
    precision: str | None  # None: the model's (or the row's) precision
    widths: dict[str, str]  # width symbol -> precision id bound
    shapes: dict[str, dict[str, int]]  # phase -> kernel symbol -> value
    counts: dict[str, int]  # phase -> count
    location: Location
    # Symbols whose value may be a fraction (`X` under uniform routing): bound by the
    # model's `experts:`, not written in the step
    fractional: frozenset[str] = frozenset()
    # The shape formulas that read `ranks`, as written: `shape` holds them with the
    # experts' binding of `ranks` in its place
    written: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelMeasured:
    """A measured time of one pass of a phase on a device at a precision."""

    device: str
    phase: str
    precision: str
    time: Fraction  # s
    text: str
    source: str
    note: str | None
    location: Location


#: The metrics a serving result may give, in the order they are shown.
SERVING_METRICS = ("ttft", "itl", "output_rate", "user_rate", "energy")


@dataclass(frozen=True)
class ServingResult:
    """Requests of `input` and `output` tokens served on a deployment of `device` and
    measured by a benchmark (a model's `measured` entry with `input` and `output`).

    `metrics` holds the figures the source gives, exactly, in SI units: `ttft` and `itl`
    in s, `output_rate` (the whole deployment's) and `user_rate` (one request's) in
    tokens/s, `energy` in J per generated token; `texts` the same figures as written.
    `concurrency` is the requests kept in flight, `batch` a static batch; neither: all
    requests queued at once (offline). `speculation` is the draft of a `technique` that
    changes the work per token; `assumed` the fields the source does not state."""

    device: str
    deployment: Deployment
    precision: str
    kv: str | None
    input: int
    output: int
    concurrency: int | None
    batch: int | None
    engine: str
    metrics: dict[str, Fraction]
    texts: dict[str, str]
    technique: str | None
    speculation: Speculation | None
    assumed: tuple[str, ...]
    source: str
    quote: str
    note: str | None
    location: Location
    index: int  # its place in the model's `measured` list


@dataclass(frozen=True)
class LedgerTerm:
    """One term of a memory ledger: a byte-count formula, or a quantity written with its
    unit (`6.56 MB`), whose exact value is `value`."""

    text: str  # as written
    formula: Formula | None
    value: Fraction | None  # B, when written as a quantity
    location: Location

    def evaluate(self, values: dict[str, int | Fraction]) -> Fraction:
        """Bytes at `values` (a quantity is the same everywhere)."""
        if self.value is not None:
            return self.value
        assert self.formula is not None
        return self.formula.evaluate(values)

    @property
    def symbols(self) -> frozenset[str]:
        return frozenset() if self.formula is None else self.formula.symbols


DEFAULT_RESERVE = Fraction(1, 10)


@dataclass(frozen=True)
class MemoryLedger:
    """What one chip holds for a model's pass (`memory:` in a model spec), as formulas
    over the parameters, the phase's variables, the deployment's and the widths.

    `weights` are bytes per chip; `kv` the cache's bytes per chip over `b` and `L`
    (None: `b*L*kv_per_token`, or no cache when `kv_per_token` is not given either);
    `activations` a quantity per sequence, a formula of bytes per chip, or None for the
    method's rule (`rooflinec.engine.memory`); `reserve` the share of the capacity held
    back for the framework. `widths` binds width symbols beside `w` to precisions.
    """

    weights: LedgerTerm
    kv: LedgerTerm | None
    kv_per_token: LedgerTerm | None
    activations: LedgerTerm | None
    reserve: Fraction
    reserve_text: str
    widths: dict[str, str]
    location: Location

    @property
    def activations_per_sequence(self) -> bool:
        """Activations written as a quantity count per sequence (times `b`)."""
        return self.activations is not None and self.activations.value is not None


@dataclass(frozen=True)
class NamedDeployment:
    """A system people buy, named in a model spec: a device and the model's split."""

    name: str
    device: str
    deployment: Deployment
    note: str | None
    location: Location


#: The most tokens a request's input or output may have (a spec's and the CLI's limit).
MAX_REQUEST_TOKENS = 10**7


#: The most tokens a verify pass of speculative decoding may draft.
MAX_DRAFT_TOKENS = 64


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding or multi-token prediction (DESIGN v3): a draft (a small model
    or the model's own prediction heads) proposes `k` tokens, and one verify pass of the
    model runs k + 1 tokens over the cache (the last accepted and the k drafted), keeping
    each drafted token with chance `acceptance` while the ones before it were kept, and
    one token of its own after the last kept: `tokens_per_verify` on average."""

    k: int
    acceptance: Fraction

    def __post_init__(self) -> None:
        if type(self.k) is not int or not 1 <= self.k <= MAX_DRAFT_TOKENS:
            raise ValueError(f"k = {self.k!r}: a draft has from 1 to {MAX_DRAFT_TOKENS} tokens")
        if not isinstance(self.acceptance, Fraction) or not 0 <= self.acceptance <= 1:
            raise ValueError(f"acceptance = {self.acceptance!r}: a chance, a number from 0 to 1")

    @property
    def tokens_per_verify(self) -> Fraction:
        """(1 − α^(k+1)) / (1 − α), exactly; k + 1 at α = 1 (every draft kept)."""
        a = self.acceptance
        if a == 1:
            return Fraction(self.k + 1)
        return (1 - a ** (self.k + 1)) / (1 - a)


@dataclass(frozen=True)
class RequestShape:
    """A request's `input` (prompt) and `output` (generated) tokens, each from 1 to
    `MAX_REQUEST_TOKENS`, and how its tokens after the first are decoded: one a pass, or
    by `speculation`."""

    input: int
    output: int
    speculation: Speculation | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output"):
            value = getattr(self, name)
            if type(value) is not int or not 1 <= value <= MAX_REQUEST_TOKENS:
                raise ValueError(
                    f"{name} = {value!r}: a request has from 1 to {MAX_REQUEST_TOKENS:,} tokens"
                )

    @property
    def drafted(self) -> int:
        """The drafted tokens of a decode pass: k under speculation, else 0. A decode pass
        runs drafted + 1 tokens, with as many more keys in the cache."""
        return 0 if self.speculation is None else self.speculation.k

    @property
    def tokens_per_pass(self) -> Fraction:
        """The tokens a decode pass yields on average: 1, or the verify pass's."""
        return Fraction(1) if self.speculation is None else self.speculation.tokens_per_verify


#: The kernel whose steps read routed experts' weights, and its symbol for the experts
#: read: a model's `experts:` binds it (`Experts.binding`).
ROUTED_KERNEL = "moe-linear"
ROUTED_SYMBOL = "X"
#: The name a model's shape formulas read for the chips of the expert-parallel group one
#: token is sent to (its dispatch and combine send it once per chip, not once per
#: expert), bound by the model's `experts:` (`Experts.ranks`).
ROUTED_RANKS = "ranks"
ROUTINGS: tuple[str, ...] = ("spread", "uniform")


@dataclass(frozen=True)
class Experts:
    """A model's routed experts (`experts:`): `count` per layer, `active` per token,
    `shared` besides (counted by the model's own steps), and the routing that decides how
    many experts' weights a pass reads."""

    count: int
    active: int
    shared: int = 0
    routing: str = "spread"
    # How the spec names the count and the active experts: a parameter or the number.
    count_text: str = ""
    active_text: str = ""

    @property
    def names(self) -> tuple[str, str]:
        """How formulas and pages write the count and the active experts: the parameters'
        names the spec used, else the numbers."""
        return self.count_text or str(self.count), self.active_text or str(self.active)

    def binding(self, tokens: str) -> str:
        """The formula of `X` per chip over the model's names, `tokens` the text of the
        tokens of a pass: min(E/ep, tokens*k) or (E/ep)*(1 - unpicked(E, k, tokens))."""
        e, k = self.names
        t = tokens if not any(op in tokens for op in "+-") else f"({tokens})"
        if self.routing == "uniform":
            return f"{e}/ep*(1 - unpicked({e}, {k}, {t}))"
        return f"min({e}/ep, {t}*{k})"

    @property
    def ranks(self) -> str:
        """The formula of `ranks`, the chips of the ep group one token is sent to: its k
        experts on distinct chips, min(k, ep), under `spread`; under `uniform` the
        expectation ep * (1 - C(E - E/ep, k) / C(E, k)) over a token's k distinct
        experts, each chip holding E/ep of them."""
        e, k = self.names
        if self.routing == "uniform":
            return f"ep*(1 - unreached({e}, {k}, {e}/ep))"
        return f"min({k}, ep)"


def model_names(parameters: Iterable[str], phases: dict[str, dict[str, int]]) -> list[str]:
    """The names a model's shape, count and tokens formulas may use: its parameters, its
    phases' variables and the deployment variables."""
    return sorted(
        {*parameters, *(v for phase in phases.values() for v in phase), *DEPLOYMENT_VARIABLES}
    )


#: The request shapes of a model whose spec names none (`requests:`).
DEFAULT_REQUESTS: dict[str, RequestShape] = {
    "chat-1k": RequestShape(1024, 1024),
    "long-8k": RequestShape(8192, 1024),
}


@dataclass(frozen=True)
class Model:
    """Catalog kernels composed into one forward pass, evaluated per phase."""

    id: str
    name: str
    description: str
    precision: str
    parameters: dict[str, int]
    phases: dict[str, dict[str, int]]
    tokens: Formula
    # The tokens a pass of each phase yields: `tokens` there, or under the phase's
    # speculation b × its tokens per verify pass
    tokens_by_phase: dict[str, int | Fraction]
    steps: tuple[ModelStep, ...]
    measured: tuple[ModelMeasured, ...]
    sources: dict[str, Source]
    assumptions: tuple[str, ...]
    versions: tuple[Version, ...]
    document: Document = field(repr=False, compare=False)
    memory: MemoryLedger | None = None  # None: the spec gives no ledger (fits unknown)
    deployments: dict[str, NamedDeployment] = field(default_factory=dict)
    # Named request shapes, in the spec's order (`DEFAULT_REQUESTS` when it names none)
    requests: dict[str, RequestShape] = field(default_factory=lambda: dict(DEFAULT_REQUESTS))
    experts: Experts | None = None  # routed experts (`experts:`), binding X of moe-linear steps
    # The phases that are verify passes of speculative decoding (a phase's `speculation:`)
    speculation: dict[str, Speculation] = field(default_factory=dict)
    # Measured serving results (`measured` entries with `input` and `output`)
    serving: tuple[ServingResult, ...] = ()

    def variables(self, phase: str, deployment: Deployment = ONE_CHIP) -> dict[str, int]:
        """The parameters, the phase's variables and the deployment's: what every formula
        is evaluated over."""
        return {**self.parameters, **self.phases[phase], **deployment.variables()}


@dataclass(frozen=True)
class Catalog:
    precisions: dict[str, Precision]
    devices: dict[str, Device]
    kernels: dict[str, Kernel]
    methods: dict[str, Method]
    root: str  # the specs folder as given
    models: dict[str, Model] = field(default_factory=dict)
    # The documents `precisions.yaml` quotes (the formats' specifications), by id
    precision_sources: dict[str, Source] = field(default_factory=dict)

    @property
    def cases(self) -> dict[str, Case]:
        return {case.id: case for kernel in self.kernels.values() for case in kernel.cases}

    def kernel_of(self, case: Case) -> Kernel:
        return self.kernels[case.kernel]

    @property
    def examples(self) -> tuple[Example, ...]:
        owners: list[Any] = [*self.methods.values(), *self.devices.values(), *self.kernels.values()]
        return tuple(example for owner in owners for example in owner.examples)
