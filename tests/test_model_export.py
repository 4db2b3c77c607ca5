"""Model rows written from their integers say what their exact values say.

The JSON and JSON Lines writers make a row's text from the bound's integers without
making its steps' results; here every bundled row at every precision is written both
ways: through the plan (the fast path) and through `model_data`, the plain data of the
row's exact values and its steps' results.
"""

from __future__ import annotations

import io
import json
from fractions import Fraction
from functools import cache

from rooflinec.assemble import catalog_or_raise
from rooflinec.compiler import Compiled, compile_catalog
from rooflinec.model_export import _dump, model_data, model_json, write_model_jsonl
from rooflinec.models import ModelResult
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
