"""Write small spec folders for tests: a precisions file plus device and kernel YAML text."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"

PRECISIONS = """\
precisions:
  fp64: {label: FP64, bytes: 8}
  fp32: {label: FP32, bytes: 4}
  tf32: {label: TF32, bytes: 4}
  bf16: {label: BF16 or FP16, bytes: 2}
  fp8:  {label: FP8, bytes: 1}
  int8: {label: INT8, bytes: 1, unit: OP}
  fp4:  {label: FP4, bytes: 0.5}
"""

SOURCE = """\
sources:
  s:
    title: A data sheet
    publisher: A vendor
    url: https://example.com/sheet
    read: 2026-10-25
    kind: vendor
versions:
  - {version: 1, date: 2026-10-25, change: First version.}
"""


# A toy device with a BF16 and an FP8 peak and one DRAM bandwidth: round figures for
# results worked out by hand (ridge 100 FLOP/B at BF16).
TOY_DEVICE = """\
id: toy
name: Toy accelerator
vendor: Test
compute:
  bf16: {peak: 100 TFLOP/s, source: s}
  fp8: {peak: 200 TFLOP/s, source: s}
memory:
  dram: {label: HBM, bandwidth: 1 TB/s, source: s}
"""


def write_specs(
    root: Path,
    devices: dict[str, str] | None = None,
    kernels: dict[str, str] | None = None,
    precisions: str = PRECISIONS,
) -> Path:
    """A spec folder under `root`; device and kernel bodies get the shared sources/versions."""
    specs = root / "specs"
    (specs / "devices").mkdir(parents=True, exist_ok=True)
    (specs / "kernels").mkdir(parents=True, exist_ok=True)
    (specs / "precisions.yaml").write_text(precisions, "utf-8")
    for name, body in (devices or {}).items():
        text = textwrap.dedent(body)
        if "sources:" not in text:
            text += SOURCE
        (specs / "devices" / f"{name}.yaml").write_text(text, "utf-8")
    for name, body in (kernels or {}).items():
        text = textwrap.dedent(body)
        if "versions:" not in text:
            text += "versions:\n  - {version: 1, date: 2026-10-25, change: First version.}\n"
        (specs / "kernels" / f"{name}.yaml").write_text(text, "utf-8")
    return specs


def copy_bundled(root: Path) -> Path:
    """A private copy of the bundled catalog, to plant changes in."""
    target = root / "specs"
    shutil.copytree(BUNDLED, target)
    return target


def windowed_llama(root: Path, window: int = 512) -> Path:
    """A copy of the bundled catalog whose Llama 3 8B attends over a sliding window of
    `window` keys (kernel attention-kv-window, `min` and `max` of L and W)."""
    specs = copy_bundled(root)
    path = specs / "models" / "llama-3-8b.yaml"
    text = path.read_text("utf-8")
    changed = text.replace(
        "kernel: attention-kv-causal, shape: {b: b, s: s, L: L,",
        f"kernel: attention-kv-window, shape: {{b: b, s: s, L: L, W: {window},",
    )
    assert changed != text
    path.write_text(changed, "utf-8")
    return specs


def without_named_deployments(specs: Path) -> None:
    """The models of `specs` without their `deployments:` and their measured serving
    results (for a copy of the bundled catalog that keeps only some devices: the named
    systems and the measured servers are on the others)."""
    for path in (specs / "models").glob("*.yaml"):
        text = path.read_text("utf-8")
        # The mapping's indented lines, up to the next top-level key.
        text = re.sub(r"(?m)^deployments:\n(?:[ #].*\n|\n)*", "", text)
        # A serving result is one flow mapping a line, with `input:`; a list left empty
        # goes with them, and so do the sources they alone cited.
        serving = re.compile(r"(?m)^  - \{[^\n]*\binput: [^\n]*\n")
        cited = {
            m.group(1) for m in re.finditer(r"\bsource: ([\w.-]+)", "".join(serving.findall(text)))
        }
        text = serving.sub("", text)
        text = re.sub(r"(?m)^measured:\n(?=\S|\n)", "", text)
        for sid in cited:
            if not re.search(rf"\bsource: {re.escape(sid)}\b", text):
                text = re.sub(rf"(?m)^  {re.escape(sid)}:\n(?:    .*\n|      .*\n)*", "", text)
        path.write_text(text, "utf-8")
