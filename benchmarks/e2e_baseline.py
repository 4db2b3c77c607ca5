"""The baseline of the end-to-end measurement: YAML in, the same rows out, by hand.

A plain program an analyst would write for the synthetic catalog (`benchmarks/synth.py`)
with ruamel.yaml, numpy and pyarrow: read the precisions, device and kernel YAML files,
parse the few units they use, evaluate the six kernels' formulas as hand-written numpy
(`benchmarks.baselines.NUMPY_FORMULAS`), compute the roofline of every case × device ×
precision by broadcasting, and write the rows rooflinec writes (the same columns, in
the same order, with the same headers) with pyarrow's CSV or Parquet writer. No schema
validation, no exact arithmetic, no tie handling, no provenance: only the work whose
output is compared.

    python -m benchmarks.e2e_baseline SPECS OUT.csv|OUT.parquet
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from ruamel.yaml import YAML

from benchmarks.baselines import NUMPY_FORMULAS

LEVELS = ("dram", "l2", "l1")
_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_QUANTITY = re.compile(r"^\s*([0-9.eE+-]+)\s*([kMGTP]?)(FLOP/s|OP/s|OPS|B/s|B)\s*$")
_SWEEP = np.array([0.5, 1.0, 2.0, 4.0])


def quantity(text: str) -> float:
    """`70.8 TFLOP/s`, `2066.6 TOPS`, `3495 GB/s`, `1 GFLOP/s` in base units."""
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    return float(match.group(1)) * _PREFIX[match.group(2)]


def percent(text: Any) -> float:
    return float(str(text).rstrip("%")) / 100


def load(specs: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    yaml = YAML(typ="safe")
    precisions = yaml.load((specs / "precisions.yaml").read_text("utf-8"))["precisions"]
    devices = [yaml.load(p.read_text("utf-8")) for p in sorted(specs.glob("devices/*.yaml"))]
    kernels = [yaml.load(p.read_text("utf-8")) for p in sorted(specs.glob("kernels/*.yaml"))]
    return precisions, devices, kernels


def compute(specs: Path) -> pa.Table:
    precisions, devices, kernels = load(specs)
    # (device, precision) pairs: devices in file order, each device's peaks in its order
    pair_device, pair_precision, peak, bandwidth = [], [], [], []
    for d in devices:
        compute_share = percent(d.get("sustained", {}).get("compute", "100%"))
        memory_share = percent(d.get("sustained", {}).get("memory", "100%"))
        for pid, entry in d["compute"].items():
            value = quantity(entry["peak"])
            if entry.get("sparsity") == "2:4":
                value /= 2
            pair_device.append(d["id"])
            pair_precision.append(pid)
            peak.append(value * compute_share)
            bandwidth.append(
                [
                    quantity(d["memory"][lv]["bandwidth"]) * memory_share
                    if lv in d["memory"]
                    else np.nan
                    for lv in LEVELS
                ]
            )
    n_pairs = len(peak)
    peak_a = np.array(peak)
    bw = np.array(bandwidth)  # (P, levels)
    width = np.array([float(precisions[p]["bytes"]) for p in pair_precision])
    pair_index = {
        (d, p): j for j, (d, p) in enumerate(zip(pair_device, pair_precision, strict=True))
    }

    case_ids, case_kernel, case_precision, flops_parts = [], [], [], []
    traffic = {lv: [] for lv in LEVELS}  # (cases, P) per level
    measured_entries = []
    for k in kernels:
        flops_fn, dram_fn, l2_fn = NUMPY_FORMULAS[k["id"]]
        symbols = list(k["symbols"])
        shape = {
            s: np.array([c["shape"][s] for c in k["cases"]], dtype=np.float64) for s in symbols
        }
        args = [shape[s][:, None] for s in symbols]
        flops_parts.append(
            np.broadcast_to(flops_fn(*shape.values())[:, None], (len(k["cases"]), n_pairs))
        )
        traffic["dram"].append(dram_fn(width[None, :], *args))
        traffic["l2"].append(l2_fn(width[None, :], *args))
        traffic["l1"].append(np.full((len(k["cases"]), n_pairs), np.nan))
        for c in k["cases"]:
            for m in c.get("measured", []):
                measured_entries.append(
                    (len(case_ids), pair_index[(m["device"], m["precision"])], quantity(m["rate"]))
                )
            case_ids.append(c["id"])
            case_kernel.append(k["id"])
            case_precision.append(c["precision"])
    n_cases = len(case_ids)
    flops = np.concatenate(flops_parts)
    traffic_a = {lv: np.concatenate(parts) for lv, parts in traffic.items()}
    intensity = {lv: flops / traffic_a[lv] for lv in LEVELS}
    lines = np.stack([intensity[lv] * bw[None, :, i] for i, lv in enumerate(LEVELS)])
    lines = np.where(np.isnan(lines), np.inf, lines)
    memory = lines.min(axis=0)
    attainable = np.minimum(peak_a[None, :], memory)
    limited_by = np.where(peak_a[None, :] <= memory, 0, 1 + lines.argmin(axis=0))
    measured = np.full((n_cases, n_pairs), np.nan)
    for i, j, rate in measured_entries:
        measured[i, j] = rate

    case_of = np.repeat(np.arange(n_cases), n_pairs)
    pair_of = np.tile(np.arange(n_pairs), n_cases)
    ids = pa.array(case_ids)
    flat = lambda a: pa.array(a.ravel(), from_pandas=True)  # noqa: E731 (NaN: empty)
    declared = np.array(case_precision)[case_of] == np.array(pair_precision)[pair_of]
    columns: dict[str, Any] = {
        "case": ids.take(case_of),
        "kernel": pa.array(case_kernel).take(case_of),
        "device": pa.array(pair_device).take(pair_of),
        "precision": pa.array(pair_precision).take(pair_of),
        "declared": pa.array(declared),
        "flops [OP]": flat(flops),
    }
    for lv in LEVELS:
        columns[f"bytes_{lv} [B]"] = flat(traffic_a[lv])
    for lv in LEVELS:
        columns[f"intensity_{lv} [OP/B]"] = flat(intensity[lv])
    columns["peak [OP/s]"] = flat(np.broadcast_to(peak_a, (n_cases, n_pairs)))
    for i, lv in enumerate(LEVELS):
        has = ~np.isnan(traffic_a[lv])
        columns[f"bandwidth_{lv} [B/s]"] = flat(np.where(has, bw[None, :, i], np.nan))
    columns["attainable [OP/s]"] = flat(attainable)
    columns["limited_by"] = pa.array(["compute", *LEVELS]).take(limited_by.ravel())
    columns["share_of_peak [1]"] = flat(attainable / peak_a[None, :])
    columns["time [s]"] = flat(flops / attainable)
    for f, key in zip(_SWEEP, ("0.5", "1", "2", "4"), strict=True):
        columns[f"bandwidth_x{key} [OP/s]"] = flat(np.minimum(peak_a[None, :], memory * f))
    for f, key in zip(_SWEEP, ("0.5", "1", "2", "4"), strict=True):
        columns[f"peak_x{key} [OP/s]"] = flat(np.minimum(peak_a[None, :] * f, memory))
    columns["measured [OP/s]"] = flat(measured)
    columns["efficiency [1]"] = flat(measured / attainable)
    empty = pa.nulls(n_cases * n_pairs, pa.float64())
    for name, unit in (
        ("measured_intensity", "OP/B"),
        ("measured_bandwidth", "B/s"),
        ("traffic_ratio", "1"),
    ):
        for lv in LEVELS:
            columns[f"{name}_{lv} [{unit}]"] = empty
    return pa.table(columns)


def main(argv: list[str]) -> int:
    specs, out = Path(argv[0]), Path(argv[1])
    table = compute(specs)
    if out.suffix == ".parquet":
        pq.write_table(table, out, compression="zstd")
    else:
        pacsv.write_csv(table, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
