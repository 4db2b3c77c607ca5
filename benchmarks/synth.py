"""Synthetic catalogs in spec language v1: N devices x M kernel cases, written as YAML.

Every catalog has the method's six precisions, devices with a peak for each of them
(some printed with 2:4 sparsity, as data sheets do) and two memory levels (`dram` and
`l2`), and six kernel families (GEMM, GEMV, fused and materialised attention, 2-D
convolution, elementwise) whose formulas give traffic at both levels. Case shapes are
swept over grids so that both compute- and memory-bound cells occur. Values come from a
seeded generator: the same arguments always write the same files.

`write_catalog(folder, devices=N, cases=M)` writes `folder/specs/` and returns it;
`generate` returns what was drawn (`SynthCatalog`) without writing anything.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

PRECISIONS: dict[str, tuple[str, Fraction, str]] = {
    # id: (label, bytes per value, FLOP or OP)
    "fp64": ("FP64", Fraction(8), "FLOP"),
    "fp32": ("FP32", Fraction(4), "FLOP"),
    "tf32": ("TF32", Fraction(4), "FLOP"),
    "bf16": ("BF16 or FP16", Fraction(2), "FLOP"),
    "fp8": ("FP8", Fraction(1), "FLOP"),
    "int8": ("INT8", Fraction(1), "OP"),
}

# Dense BF16 peak in TFLOP/s is drawn per device; other precisions are multiples of it.
_PEAK_FACTORS: dict[str, Fraction] = {
    "fp64": Fraction(1, 16),
    "fp32": Fraction(1, 8),
    "tf32": Fraction(1, 2),
    "bf16": Fraction(1),
    "fp8": Fraction(2),
    "int8": Fraction(2),
}
_SPARSE = frozenset({"tf32", "bf16", "fp8", "int8"})  # printed with 2:4 sparsity on some devices


@dataclass(frozen=True)
class KernelFamily:
    """One kernel: symbols, formulas (`flops`, and bytes at `dram` and `l2`), a shape grid."""

    id: str
    name: str
    symbols: dict[str, str]
    flops: str
    dram: str
    l2: str
    grid: dict[str, tuple[int, ...]]

    def shapes(self) -> itertools.cycle[dict[str, int]]:
        names = list(self.grid)
        combos = itertools.product(*(self.grid[n] for n in names))
        return itertools.cycle([dict(zip(names, combo, strict=True)) for combo in combos])


FAMILIES: tuple[KernelFamily, ...] = (
    KernelFamily(
        "syn-gemm",
        "GEMM",
        {"M": "rows of A and C", "N": "columns of B and C", "K": "reduction dimension"},
        "2*M*N*K",
        "w*(M*K + K*N + M*N)",
        "w*(M*K*ceil(N/128) + K*N*ceil(M/128) + M*N)",
        {"M": (64, 512, 2048, 8192), "N": (128, 1024, 4096, 14336), "K": (32, 256, 4096)},
    ),
    KernelFamily(
        "syn-gemv",
        "GEMV",
        {"M": "output features", "K": "input features", "B": "batch"},
        "2*M*K*B",
        "w*(M*K + K*B + M*B)",
        "w*(M*K + K*B*ceil(M/64) + M*B)",
        {"M": (1024, 4096, 14336), "K": (1024, 4096, 8192), "B": (1, 2, 4, 8, 16, 32)},
    ),
    KernelFamily(
        "syn-attention",
        "Attention, fused",
        {"s": "sequence length", "d": "head size", "h": "heads"},
        "4*s**2*d*h",
        "w*4*s*d*h",
        "w*h*(4*s*d + 2*s*d*ceil(s/max(d, 64)))",
        {"s": (256, 1024, 2048, 4096, 8192, 16384), "d": (64, 128), "h": (1, 8, 32)},
    ),
    KernelFamily(
        "syn-attention-unfused",
        "Attention, materialised",
        {"s": "sequence length", "d": "head size", "h": "heads"},
        "4*s**2*d*h",
        "w*h*(4*s*d + 4*s*s)",
        "w*h*(4*s*d + 2*s*s)",
        {"s": (256, 512, 1024, 2048, 4096), "d": (64, 128, 256), "h": (1, 4, 16)},
    ),
    KernelFamily(
        "syn-conv2d",
        "2-D convolution",
        {
            "Nb": "batch",
            "H": "height",
            "W": "width",
            "C": "input channels",
            "F": "filters",
            "R": "filter height",
            "S": "filter width",
        },
        "2*Nb*H*W*C*F*R*S",
        "w*(Nb*H*W*C + R*S*C*F + Nb*H*W*F)",
        "w*(Nb*H*W*C*min(R*S, 9) + R*S*C*F*ceil(Nb*H*W/4096) + Nb*H*W*F)",
        {
            "Nb": (1, 8, 32),
            "H": (14, 28, 56),
            "W": (14, 56),
            "C": (64, 256),
            "F": (64, 512),
            "R": (1, 3),
            "S": (1, 3),
        },
    ),
    KernelFamily(
        "syn-elementwise",
        "Elementwise add",
        {"n": "values per array"},
        "n",
        "w*3*n",
        "w*3*n",
        {"n": tuple(2**k for k in range(10, 31))},
    ),
)


@dataclass(frozen=True)
class SynthDevice:
    id: str
    peaks: dict[str, tuple[str, bool]]  # precision -> (printed text, printed with 2:4 sparsity)
    dram: str
    l2: str
    compute_share: int  # per cent
    memory_share: int


@dataclass(frozen=True)
class SynthCase:
    id: str
    kernel: str
    precision: str
    shape: dict[str, int]


@dataclass
class SynthCatalog:
    """What `generate` drew, before it is written out as YAML."""

    devices: list[SynthDevice] = field(default_factory=list)
    cases: list[SynthCase] = field(default_factory=list)

    @property
    def cells(self) -> int:
        return sum(len(d.peaks) for d in self.devices) * len(self.cases)


def _tera(value: Fraction) -> str:
    """A rate or bandwidth in T units with at most one decimal, as data sheets print them."""
    text = f"{float(value):.1f}"
    return text[:-2] if text.endswith(".0") else text


def generate(devices: int, cases: int, seed: int = 7) -> SynthCatalog:
    """Draw `devices` devices and `cases` cases spread round-robin over the kernel families."""
    rng = random.Random(seed)
    out = SynthCatalog()
    for i in range(devices):
        bf16 = Fraction(rng.randrange(500, 25000), 10)  # dense TFLOP/s
        sparse = rng.random() < 0.5
        peaks: dict[str, tuple[str, bool]] = {}
        for pid, factor in _PEAK_FACTORS.items():
            dense = bf16 * factor * Fraction(rng.randrange(90, 111), 100)
            printed_sparse = sparse and pid in _SPARSE
            value = dense * 2 if printed_sparse else dense
            unit = "TOPS" if PRECISIONS[pid][2] == "OP" else "TFLOP/s"
            peaks[pid] = (f"{_tera(value)} {unit}", printed_sparse)
        dram = Fraction(rng.randrange(500, 8000), 1000) * 1  # TB/s
        l2 = dram * Fraction(rng.randrange(30, 120), 10)
        out.devices.append(
            SynthDevice(
                f"syn-device-{i:04d}",
                peaks,
                f"{_tera(dram * 1000)} GB/s",
                f"{_tera(l2)} TB/s",
                rng.choice((100, 95, 90, 85)),
                rng.choice((100, 92, 90, 80)),
            )
        )
    shapes = {family.id: family.shapes() for family in FAMILIES}
    precisions = list(PRECISIONS)
    for j in range(cases):
        family = FAMILIES[j % len(FAMILIES)]
        shape = next(shapes[family.id])
        out.cases.append(
            SynthCase(f"{family.id}-{j:06d}", family.id, precisions[j % len(precisions)], shape)
        )
    return out


_SOURCE = """\
sources:
  synthetic:
    title: A synthetic data sheet
    publisher: rooflinec benchmarks
    url: https://example.com/rooflinec/synthetic
    read: 2026-11-30
    kind: vendor
versions:
  - {version: 1, date: 2026-11-30, change: Generated.}
"""


def _precisions_yaml() -> str:
    lines = ["precisions:"]
    for pid, (label, width, unit) in PRECISIONS.items():
        extra = ", unit: OP" if unit == "OP" else ""
        lines.append(f"  {pid}: {{label: {label}, bytes: {width}{extra}}}")
    return "\n".join(lines) + "\n"


def _device_yaml(d: SynthDevice) -> str:
    lines = [
        f"id: {d.id}",
        f"name: Synthetic accelerator {d.id[-4:]}",
        "vendor: Synthetic",
        "kind: gpu",
        "compute:",
    ]
    for pid, (text, sparse) in d.peaks.items():
        sparsity = ', sparsity: "2:4"' if sparse else ""
        lines.append(f"  {pid}: {{peak: {text}{sparsity}, source: synthetic, quote: {text}}}")
    lines += [
        "memory:",
        f"  dram: {{label: HBM3, bandwidth: {d.dram}, capacity: 80 GB, source: synthetic,"
        f" quote: {d.dram}}}",
        f"  l2: {{label: SRAM, bandwidth: {d.l2}, source: synthetic, quote: {d.l2}}}",
        "sustained:",
        f"  compute: {d.compute_share}%",
        f"  memory: {d.memory_share}%",
        "assumptions:",
        "  - Synthetic figures drawn by the benchmark generator.",
    ]
    return "\n".join(lines) + "\n" + _SOURCE


def _kernel_yaml(family: KernelFamily, cases: list[SynthCase], measured_on: str | None) -> str:
    lines = [
        f"id: {family.id}",
        f"name: {family.name} (synthetic)",
        f"description: {family.name}, with shapes swept by the benchmark generator.",
        "symbols:",
        *(f"  {name}: {meaning}" for name, meaning in family.symbols.items()),
        f"flops: {family.flops}",
        "bytes:",
        f"  dram: {family.dram}",
        f"  l2: {family.l2}",
        "cases:",
    ]
    for n, case in enumerate(cases):
        shape = ", ".join(f"{k}: {v}" for k, v in case.shape.items())
        lines += [
            f"  - id: {case.id}",
            f"    name: {family.name} {case.id[-6:]}",
            f"    precision: {case.precision}",
            f"    shape: {{{shape}}}",
        ]
        if measured_on is not None and n == 0:
            # One measured run per kernel, far below any ceiling: exercises efficiency.
            lines += [
                "    measured:",
                f"      - {{device: {measured_on}, precision: {case.precision}, rate: 1 GFLOP/s}}",
            ]
    return "\n".join(lines) + "\n" + _SOURCE


def write_catalog(folder: Path, devices: int, cases: int, seed: int = 7) -> Path:
    """Write a synthetic catalog into `folder/specs` and return that path."""
    synth = generate(devices, cases, seed)
    return write_generated(folder, synth)


def write_generated(folder: Path, synth: SynthCatalog) -> Path:
    specs = folder / "specs"
    (specs / "devices").mkdir(parents=True, exist_ok=True)
    (specs / "kernels").mkdir(parents=True, exist_ok=True)
    (specs / "precisions.yaml").write_text(_precisions_yaml(), "utf-8")
    for d in synth.devices:
        (specs / "devices" / f"{d.id}.yaml").write_text(_device_yaml(d), "utf-8")
    measured_on = synth.devices[0].id if synth.devices else None
    for family in FAMILIES:
        cases = [c for c in synth.cases if c.kernel == family.id]
        if cases:
            text = _kernel_yaml(family, cases, measured_on)
            (specs / "kernels" / f"{family.id}.yaml").write_text(text, "utf-8")
    return specs
