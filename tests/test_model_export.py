"""Model rows written from their integers say what their exact values say.

The JSON and JSON Lines writers make a row's text from the bound's integers without
making its steps' results; here every bundled row at every precision is written both
ways: through the plan (the fast path) and through `model_data`, the plain data of the
row's exact values and its steps' results.
"""

from __future__ import annotations

import gc
import io
import json
from fractions import Fraction
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import LEVELS
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.models import ModelResult, collector_paused, run_bound
from rooflinec.engine.terms import COMPUTE, LATENCY, LIMITED_BY
from rooflinec.outputs.model_rows import (
    _dump,
    model_data,
    model_json,
    write_model_json_rows,
    write_model_jsonl,
)
from tests.specfactory import BUNDLED


@cache
def compiled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


@cache
def rows() -> list[ModelResult]:
    """Every bundled model row at every precision (int4's and fp6's widths are not whole
    bytes, so their counts are Fractions)."""
    c = compiled()
    return c.model_engine.rows(precisions=list(c.catalog.precisions))


def test_json_rows_read_back_as_the_rows_data() -> None:
    """Each row's indented text holds exactly `model_data(row)`: the same numbers, each
    an int when the exact value is one, else the nearest float."""
    for r in rows():
        assert model_data(r) == json.loads(model_json(r, "    "))


def test_json_row_head_is_the_indented_dump() -> None:
    """A row's fields before its steps are laid out as `_dump` indents the row's data
    (`json.dumps(indent=2)` at the row's depth), `"steps"` follows the last of them, and
    the whole row is the row's data."""
    for r in rows()[::7]:
        head = _dump(model_data(r, steps=False), "    ")
        text = model_json(r, "    ")
        assert text.startswith(head[: -len("\n    }")] + ',\n      "steps": [\n')
        assert model_data(r) == json.loads(text)


def test_jsonl_lines_are_json_dumps_of_the_rows_data() -> None:
    """A JSON Lines row is `json.dumps(model_data(row))`, byte for byte."""
    out = io.StringIO()
    write_model_jsonl(rows(), out)
    expected = "".join(json.dumps(model_data(r), ensure_ascii=False) + "\n" for r in rows())
    assert expected == out.getvalue()


def test_step_times_sum_to_the_row_time() -> None:
    """The pass's time, summed per limit from integers, is the exact sum of its steps'
    times, and each limit's share is the sum of the steps it limits."""
    for r in rows()[::11]:
        assert r.time == sum((s.time for s in r.steps), Fraction(0))
        for limit, time in r.time_by_limit.items():
            assert time == sum((s.time for s in r.steps if s.limited_by == limit), Fraction(0))


def test_a_decode_projection_bound_by_its_weights_on_the_h100() -> None:
    """Llama 3 8B's query projection at decode (one token) on the H100 SXM streams its
    weights: its time is the longest of its ceilings' times (DRAM), from its own counts,
    and its JSON line gives that time and rate as floats."""
    c = compiled()
    r = c.model_result("llama-3-8b", "decode-b1-l8192", "nvidia-h100-sxm", "bf16")
    assert r is not None
    figures = c.devices["nvidia-h100-sxm"]
    s = r.steps[2]
    assert ("q-proj", 32, "dram") == (s.step, s.count, s.limited_by)
    runs = [
        s.flops / s.count / figures.peaks["bf16"],
        *(
            s.bytes[lv] / s.count / figures.bandwidths[lv]
            for lv in s.bytes
            if lv in figures.bandwidths
        ),
    ]
    if s.floor is not None:
        runs.append(s.floor)
    assert max(runs) * s.count == s.time
    assert s.flops / s.time == s.attainable
    line = json.loads(model_json(r))["steps"][2]
    assert float(s.time) == line["time"]
    assert float(s.attainable) == line["attainable"]


# ---------------------------------------------------------------- shared work, same values


_positive = st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(10**6))
# Few distinct small values make equal times (ties) common.
_tied = st.sampled_from([Fraction(1), Fraction(2), Fraction(1, 2), Fraction(3, 2)])
_exact = st.one_of(_tied, _positive)


@settings(max_examples=400, deadline=None)
@given(
    flops=_exact,
    peak=_exact,
    traffic=st.dictionaries(st.sampled_from(LEVELS), _exact, max_size=len(LEVELS)),
    bandwidths=st.dictionaries(st.sampled_from(LEVELS), _exact, max_size=len(LEVELS)),
    latency=st.none() | _exact,
)
def test_run_bound_is_the_longest_ceiling_time_first_in_method_order(
    flops: Fraction,
    peak: Fraction,
    traffic: dict[str, Fraction],
    bandwidths: dict[str, Fraction],
    latency: Fraction | None,
) -> None:
    """A run's bound from cross-multiplied integers is, exactly, the longest of its
    ceilings' times computed with Fractions, and on a tie the ceiling that comes first
    in LIMITED_BY order (compute, the levels, latency) holds it."""
    run = (
        flops.numerator,
        flops.denominator,
        tuple(
            (lv, traffic[lv].numerator, traffic[lv].denominator) for lv in LEVELS if lv in traffic
        ),
    )
    figures = {lv: (bw.numerator, bw.denominator) for lv, bw in bandwidths.items()}
    n, d, limited_by = run_bound(run, (peak.numerator, peak.denominator), figures, latency)
    times = {COMPUTE: flops / peak}
    times.update({lv: traffic[lv] / bandwidths[lv] for lv in traffic if lv in bandwidths})
    if latency is not None:
        times[LATENCY] = latency
    longest = max(times.values())
    assert Fraction(n, d) == longest
    assert limited_by == next(name for name in LIMITED_BY if times.get(name) == longest)


def test_every_step_sits_on_its_own_roofline() -> None:
    """Every step of every bundled row (bounds found once per device and distinct run,
    and shared between rows) has the time its own ceilings give it, computed here from
    the device's figures with Fractions, and the pass's time per limit is the sum of its
    steps'."""
    c = compiled()
    for r in rows()[::5]:
        figures = c.devices[r.device]
        sums: dict[str, Fraction] = {}
        for s in r.steps:
            times = {COMPUTE: s.flops / s.count / figures.peaks[s.precision]}
            for lv in LEVELS:
                if lv in s.bytes and lv in figures.bandwidths:
                    times[lv] = s.bytes[lv] / s.count / figures.bandwidths[lv]
            if s.floor is not None:
                times[LATENCY] = s.floor
            longest = max(times.values())
            limit = next(name for name in LIMITED_BY if times.get(name) == longest)
            assert (longest * s.count, limit) == (s.time, s.limited_by)
            sums[limit] = sums.get(limit, Fraction(0)) + s.time
        assert r.time == sum(sums.values(), Fraction(0))
        assert {k: v for k, v in r.time_by_limit.items() if v} == sums


def test_rows_written_together_read_as_each_written_alone() -> None:
    """Texts shared between the rows of one write (a plan's fields, a device's step
    numbers) leave every row's text as it is when the row is written on its own."""
    out = io.StringIO()
    write_model_json_rows(rows(), out)
    alone = ",\n".join("    " + model_json(r, "    ") for r in rows())
    assert "\n" + alone == out.getvalue()


def test_collector_paused_restores_the_collector() -> None:
    """The cycle collector is off inside and as it was after, also after an error."""
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        assert not gc.isenabled()
        raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


# ------------------------------------------------------------------ one table per row kind


def test_every_format_of_a_model_row_names_the_field_tables_fields() -> None:
    """JSON, JSON Lines, CSV and the table of model rows lay out `MODEL_FIELDS` and
    `STEP_FIELDS` in order and nothing else: the keys of each row and step, the CSV header
    and the table's columns."""
    from rooflinec.outputs.model_rows import (
        MODEL_CSV_COLUMNS,
        MODEL_FIELDS,
        STEP_FIELDS,
        write_model_csv,
        write_model_table,
    )

    sample = rows()[:40]
    row_keys = [f.key for f in MODEL_FIELDS if f.json] + ["steps"]
    step_keys = [f.key for f in STEP_FIELDS if f.json]
    out = io.StringIO()
    write_model_jsonl(sample, out)
    for line in out.getvalue().splitlines():
        data = json.loads(line)
        assert row_keys == list(data)
        assert all(step_keys == list(step) for step in data["steps"])
    indented = json.loads("[" + "".join(_rows_text(sample)) + "]")
    assert all(row_keys == list(row) for row in indented)
    out = io.StringIO()
    write_model_csv(sample, out)
    header = out.getvalue().splitlines()[0].split(",")
    assert [h for f in MODEL_FIELDS for h in f.headers] == MODEL_CSV_COLUMNS == header
    out = io.StringIO()
    write_model_table(compiled().catalog, sample, out)
    columns = out.getvalue().splitlines()[0].split()
    shown = [f.table for f in MODEL_FIELDS if f.table is not None]
    assert " ".join(shown).split() == columns


def _rows_text(sample: list[ModelResult]) -> list[str]:
    out = io.StringIO()
    write_model_json_rows(sample, out)
    return [out.getvalue()]


def test_model_csv_cells_are_the_rows_exact_values() -> None:
    """Each CSV cell of a model row is its field's exact value, as JSON writes it."""
    from rooflinec.outputs.model_rows import MODEL_FIELDS, write_model_csv

    sample = rows()[::50]
    out = io.StringIO()
    write_model_csv(sample, out)
    for r, line in zip(sample, out.getvalue().splitlines()[1:], strict=True):
        data = model_data(r, steps=False)
        cells = iter(line.split(","))
        for f in MODEL_FIELDS:
            if not f.json:
                assert str(len(r.steps)) == next(cells)
                continue
            for key in f.keys or (f.key,):
                value = data[f.key].get(key) if f.keys else data[f.key]
                expected = "" if value is None else json.dumps(value)
                assert expected.strip('"') == next(cells)
