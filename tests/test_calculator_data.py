"""What the calculator page is built from: formula trees as JSON, its inline data."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import LEVELS
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.formulas import FormulaError, parse_formula
from rooflinec.formulas.evaluate import _compile, _finish
from rooflinec.formulas.tree_json import rational_text, tree_from_json, tree_json
from rooflinec.site.escape import script_json
from rooflinec.site.pages.calculator import calculator_data
from rooflinec.site.pages.model import Site

BUNDLED = Path(__file__).resolve().parents[1] / "specs"


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def _evaluate(tree: Any, values: dict[str, int | Fraction]) -> Fraction:
    node = tree_from_json(tree)
    return _finish(_compile(node, lambda name: lambda env: env[name])(values))


def test_every_bundled_kernel_formula_round_trips_at_its_cases(compiled: Compiled) -> None:
    """Each kernel formula's JSON tree, read back, gives the formula's value at every case
    (widths at the case's precision): the tree the page evaluates is the parsed one."""
    checked = 0
    for kernel in compiled.catalog.kernels.values():
        formulas = [kernel.flops, *kernel.bytes.values()]
        for case in kernel.cases:
            if case.grid is not None:
                continue
            width = compiled.catalog.precisions[case.precision].bytes
            values: dict[str, int | Fraction] = {**case.shape, "w": width}
            for name, bound in case.widths.items():
                values[name] = compiled.catalog.precisions[bound].bytes
            for name in kernel.widths:
                values.setdefault(name, width)
            # A tiled kernel's traffic at one device's shared memory per core.
            values["smem"] = max(compiled.counts.shared.values())
            for formula in formulas:
                data = json.loads(json.dumps(tree_json(formula)))
                assert formula.evaluate(values) == _evaluate(data, values)
                checked += 1
    assert checked > 60


def test_every_bundled_model_step_round_trips_at_its_phases(compiled: Compiled) -> None:
    """Model steps' shape and count trees (the routed experts' `unpicked` included) give
    the built model's values at every phase, on one chip."""
    for model in compiled.catalog.models.values():
        for phase in model.phases:
            values: dict[str, int | Fraction] = dict(model.variables(phase))
            for step in model.steps:
                assert step.counts[phase] == _evaluate(tree_json(step.count), values)
                for symbol, formula in step.shape.items():
                    assert step.shapes[phase][symbol] == _evaluate(tree_json(formula), values)


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        (["x", "1"], "is not one the parser makes"),
        (["f", "eval", [["n", "1"]]], "unknown function 'eval'"),
        (["f", "ceil", [["n", "1"], ["n", "2"]]], "ceil takes 1 to 1 arguments"),
        (["^", ["s", "M"], 65], "beyond 0..64"),
        (["n", "1e3"], "is not p or p/q"),
        (["s", "__import__('os')"], "is not one the parser makes"),
        (["-", ["-", ["n", "1"]]], None),
    ],
)
def test_a_tree_that_is_not_the_parsers_is_refused(tree: Any, message: str | None) -> None:
    """Only the parser's nodes, functions and limits are read back."""
    if message is None:
        assert _evaluate(tree, {}) == 1
        return
    with pytest.raises(FormulaError, match=message.replace("(", r"\(").replace(".", r"\.")):
        tree_from_json(tree)


def test_a_tree_too_deep_or_too_big_is_refused() -> None:
    """The node count and the depth are capped as the parser caps them."""
    deep: Any = ["n", "1"]
    for _ in range(50):
        deep = ["-", deep]
    with pytest.raises(FormulaError, match="deeper than 40"):
        tree_from_json(deep)
    wide = ["+", [[0, ["n", "1"]] for _ in range(500)]]
    with pytest.raises(FormulaError, match="more than 400 nodes"):
        tree_from_json(wide)


def test_a_divisor_keeps_its_text_for_the_message() -> None:
    """`K` in `M/K` is the token the page's division-by-zero message quotes."""
    tree = tree_json(parse_formula("2*M/K", {"M", "K"}))
    assert tree == ["*", [[0, ["n", "2"], ""], [0, ["s", "M"], ""], [1, ["s", "K"], "K"]]]


def test_rationals_are_exact_text() -> None:
    assert ["3350000000000", "1/3", "-5/2"] == [
        rational_text(v) for v in (Fraction(3_350_000_000_000), Fraction(1, 3), Fraction(-5, 2))
    ]


def test_inline_data_cannot_close_its_script_element() -> None:
    """Markup in a name is written as escapes: no `</script>`, no comment opener."""
    text = script_json({"name": "</script><script>alert(1)</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script><!-- & -->"}


def test_the_data_holds_every_device_and_kernel_exactly(compiled: Compiled) -> None:
    """Data-sheet peaks, shares, bandwidths and latencies as exact rationals; every
    kernel with cases of its own; every model with a named deployment it can run."""
    data = calculator_data(Site.of(compiled))
    catalog = compiled.catalog
    assert list(data["devices"]) == list(catalog.devices)
    h100 = data["devices"]["nvidia-h100-sxm"]
    assert h100["peaks"]["bf16"] == "989500000000000"
    assert h100["memory"]["dram"] == ["3350000000000", "1"]
    assert h100["latency"] == rational_text(catalog.devices["nvidia-h100-sxm"].launch.latency)  # type: ignore[union-attr]
    for device in catalog.devices.values():
        figures = compiled.devices[device.id]
        entry = data["devices"][device.id]
        share = Fraction(entry["compute_share"])
        assert {p: Fraction(v) * share for p, v in entry["peaks"].items()} == figures.peaks
        sustained = {lv: Fraction(bw) * Fraction(s) for lv, (bw, s) in entry["memory"].items()}
        assert sustained == {
            lv: figures.bandwidths[lv] for lv in LEVELS if lv in figures.bandwidths
        }
    assert {
        k for k in catalog.kernels if any(c.grid is None for c in catalog.kernels[k].cases)
    } == set(data["kernels"])
    assert len(data["models"]) >= 10
    assert data["defaults"]["model"] == "llama-3-70b"
