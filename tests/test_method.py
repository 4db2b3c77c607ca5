"""The method note's formulas are the ones the compiler runs, and its example passes."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Catalog, Figure, MemoryLevel, Peak
from rooflinec.engine.cells import Result, Run
from rooflinec.engine.compiler import compile_catalog, device_figures
from rooflinec.engine.examples import run_example
from rooflinec.engine.terms import SWEEP, SWEEP_KEYS
from rooflinec.errors import Location
from rooflinec.formulas import Formula
from tests.specfactory import BUNDLED

positive = st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(10**16)).filter(
    lambda f: f > 0
)
share = st.fractions(min_value=Fraction(1, 100), max_value=1).filter(lambda f: f > 0)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return catalog_or_raise(BUNDLED)


def method_formulas(catalog: Catalog) -> dict[str, Formula]:
    return {f.name: f.formula for f in catalog.methods["roofline"].formulas}


def test_method_lists_every_compiler_output(catalog: Catalog) -> None:
    """Every output the compiler computes has its formula in the method note."""
    expected = {
        "peak",
        "bandwidth",
        "intensity",
        "ridge",
        "attainable",
        "share_of_peak",
        "time",
        "efficiency",
        "bandwidth_sweep",
        "peak_sweep",
        "floor_rate",
        "measured_intensity",
        "measured_bandwidth",
        "traffic_ratio",
    }
    assert expected == set(method_formulas(catalog))


@settings(max_examples=60, deadline=None)
@given(
    flops=positive,
    bytes_=positive,
    counted=positive,
    time=positive,
    launches=st.integers(1, 64),
    latency=positive,
)
def test_method_floor_and_traffic_equal_compiler(
    catalog: Catalog,
    flops: Fraction,
    bytes_: Fraction,
    counted: Fraction,
    time: Fraction,
    launches: int,
    latency: Fraction,
) -> None:
    """The latency floor and the measured-traffic formulas give what a result computes."""
    f = method_formulas(catalog)
    run = Run(time, flops, True, {"dram": counted}, None, Location("x", 1, 1))
    peak, bandwidth = Fraction(10**15), Fraction(4 * 10**12)
    floor = launches * latency
    result = Result(
        "c",
        "k",
        "d",
        "bf16",
        True,
        flops,
        {"dram": bytes_},
        peak,
        {"dram": bandwidth},
        (),
        None,
        floor,
        run,
    )
    floor_rate = f["floor_rate"].evaluate(
        {"flops": flops, "launches": launches, "latency": latency}
    )
    assert floor_rate == result.floor_rate
    assert min(peak, flops / bytes_ * bandwidth, floor_rate) == result.attainable
    assert max(flops / min(peak, flops / bytes_ * bandwidth), floor) == result.time
    env = {"counted_flops": flops, "counted_bytes": counted, "measured_time": time, "bytes": bytes_}
    assert f["measured_intensity"].evaluate(env) == result.measured_intensity["dram"]
    assert f["measured_bandwidth"].evaluate(env) == result.measured_bandwidth["dram"]
    assert f["traffic_ratio"].evaluate(env) == result.traffic_ratio["dram"]


@settings(max_examples=60, deadline=None)
@given(
    printed_peak=positive,
    sparse=st.booleans(),
    compute_share=share,
    printed_bandwidth=positive,
    memory_share=share,
    flops=positive,
    bytes_=positive,
    measured=positive,
)
def test_method_formulas_equal_compiler(
    catalog: Catalog,
    printed_peak: Fraction,
    sparse: bool,
    compute_share: Fraction,
    printed_bandwidth: Fraction,
    memory_share: Fraction,
    flops: Fraction,
    bytes_: Fraction,
    measured: Fraction,
) -> None:
    """On random inputs, each method formula gives exactly what the compiler computes."""
    f = {m.name: m.formula for m in catalog.methods["roofline"].formulas}
    base = catalog.devices["nvidia-h100-sxm"]
    figure = dataclasses.replace(base.peaks["bf16"].figure, value=printed_peak)
    bw_figure = dataclasses.replace(base.memory["dram"].bandwidth, value=printed_bandwidth)
    device = dataclasses.replace(
        base,
        peaks={"bf16": Peak("bf16", figure, "2:4" if sparse else None, None)},
        memory={"dram": MemoryLevel("dram", "HBM", bw_figure, None, None, None)},
        compute_share=compute_share,
        memory_share=memory_share,
    )
    figures = device_figures(device)
    values: dict[str, Fraction | int] = {
        "printed_peak": printed_peak,
        "sparsity_divisor": 2 if sparse else 1,
        "compute_share": compute_share,
        "printed_bandwidth": printed_bandwidth,
        "memory_share": memory_share,
    }
    peak = f["peak"].evaluate(values)
    bandwidth = f["bandwidth"].evaluate(values)
    assert figures.peaks["bf16"] == peak
    assert figures.bandwidths["dram"] == bandwidth
    assert figures.ridges["bf16"]["dram"] == f["ridge"].evaluate(
        {"peak": peak, "bandwidth": bandwidth}
    )
    result = Result(
        "c",
        "k",
        device.id,
        "bf16",
        True,
        flops,
        {"dram": bytes_},
        peak,
        {"dram": bandwidth},
        (),
        measured,
    )
    intensity = f["intensity"].evaluate({"flops": flops, "bytes": bytes_})
    assert result.intensity["dram"] == intensity
    env = {"peak": peak, "bandwidth": bandwidth, "intensity": intensity}
    attainable = f["attainable"].evaluate(env)
    assert result.attainable == attainable
    env |= {"attainable": attainable, "flops": flops, "measured": measured}
    assert result.share_of_peak == f["share_of_peak"].evaluate(env)
    assert result.time == f["time"].evaluate(env)
    assert result.efficiency == f["efficiency"].evaluate(env)
    for key, factor in zip(SWEEP_KEYS, SWEEP, strict=True):
        assert result.bandwidth_sweep[key] == f["bandwidth_sweep"].evaluate(
            env | {"factor": factor}
        )
        assert result.peak_sweep[key] == f["peak_sweep"].evaluate(env | {"factor": factor})


def test_reference_example_passes(catalog: Catalog) -> None:
    """The H100 worked example: every expectation within its printed precision."""
    compiled = compile_catalog(catalog)
    (example,) = [e for e in catalog.examples if e.id == "h100-worked-example"]
    outcomes = run_example(compiled, example)
    assert [] == [o for o in outcomes if not o.passed]
    assert 13 == len(outcomes)


def test_reference_example_fails_on_wrong_figure(catalog: Catalog) -> None:
    """The example is a real check: a 1 % slower DRAM moves the ridge out of tolerance."""
    base = catalog.devices["nvidia-h100-sxm"]
    level = base.memory["dram"]
    slower = dataclasses.replace(
        level,
        bandwidth=dataclasses.replace(
            level.bandwidth, value=level.bandwidth.value * Fraction(99, 100)
        ),
    )
    devices = {**catalog.devices, base.id: dataclasses.replace(base, memory={"dram": slower})}
    compiled = compile_catalog(dataclasses.replace(catalog, devices=devices))
    (example,) = [e for e in catalog.examples if e.id == "h100-worked-example"]
    failed = {o.expectation.output for o in run_example(compiled, example) if not o.passed}
    assert {"bandwidth", "ridge"} == failed


def test_figure_type_is_frozen() -> None:
    """Catalog values are frozen: a compiled figure cannot be changed in place."""
    figure = Figure(Fraction(1), "1 TB/s", "s", None, None, (), None)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        figure.value = Fraction(2)  # type: ignore[misc]
