"""A small spec folder with a measured run and a device with a 2 µs launch-latency floor."""

from __future__ import annotations

from pathlib import Path

from tests.specfactory import write_specs

DEVICE = """\
id: gpu-a
name: GPU A
vendor: A vendor
kind: gpu
compute:
  bf16: {peak: 1000 TFLOP/s, source: s}
memory:
  dram: {label: HBM3, bandwidth: 4 TB/s, source: s}
  l2: {label: SRAM, bandwidth: 20 TB/s, source: s}
launch: {latency: 2 µs, source: s}
"""

# The same device without a floor.
DEVICE_NO_FLOOR = (
    DEVICE.replace("gpu-a", "gpu-b")
    .replace("GPU A", "GPU B")
    .replace("launch: {latency: 2 µs, source: s}\n", "")
)

KERNEL = """\
# An elementwise kernel: comments here must survive `rooflinec import --write`.
id: axpy
name: AXPY
description: y = a x + y.
symbols: {n: values}
flops: 2*n
bytes: {dram: 3*n*w, l2: 3*n*w}  # read x and y, write y
sources:
  run1:
    title: Nsight Compute run of axpy
    publisher: The benchmark team
    url: https://example.com/runs/axpy
    read: 2026-11-20
    kind: measurement
    tool: Nsight Compute 2025.1
    command: ncu --csv --page raw ./axpy
cases:
  # the tiny case is launch bound
  - id: axpy-tiny
    name: tiny
    precision: bf16
    shape: {n: 1024}
  - id: axpy-big
    name: big
    precision: bf16
    shape: {n: 1000000000}
    measured:
      - device: gpu-b
        precision: bf16
        time: 2 ms
        flops: 2000000000
        bytes: {dram: 7.2 GB, l2: 6000000000}  # as counted
        launches: 1
        source: run1
"""


def write_measured(root: Path, kernel: str = KERNEL) -> Path:
    """The spec folder: devices gpu-a (2 µs floor) and gpu-b (none), kernel axpy."""
    return write_specs(root, {"gpu-a": DEVICE, "gpu-b": DEVICE_NO_FLOOR}, {"axpy": kernel})
