"""Each device's ridge point agrees with the reference tables it was written from.

`tests/ridges/*.csv` copy, per device and precision, the peak and the DRAM (or on-chip,
for SRAM-only parts) bandwidth that the reference files in `shared/reference/` print
(per chip, dense), with the section they come from. The compiled catalog's ridge point
must be within 1.5 % of peak / bandwidth from those tables.
"""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Catalog
from rooflinec.engine.compiler import compile_catalog
from tests.specfactory import BUNDLED

TABLES = sorted((Path(__file__).parent / "ridges").glob("*.csv"))
TOLERANCE = Fraction(15, 1000)


def _rows() -> list[dict[str, str]]:
    rows = []
    for table in TABLES:
        with table.open(encoding="utf-8", newline="") as f:
            rows += [{**row, "table": table.name} for row in csv.DictReader(f)]
    return rows


ROWS = _rows()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return catalog_or_raise(BUNDLED)


def test_tables_cover_the_grown_catalog() -> None:
    """The reference tables name at least 35 devices beyond the first fifteen."""
    assert len({row["device"] for row in ROWS}) >= 35


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['device']}-{r['precision']}" for r in ROWS])
def test_ridge_agrees_with_reference(row: dict[str, str], catalog: Catalog) -> None:
    """peak / bandwidth from the reference table, against the compiled ridge point."""
    figures = compile_catalog(catalog).devices[row["device"]]
    level = row.get("level") or "dram"
    expected = (Fraction(row["peak_tflops"]) * 10**12) / (Fraction(row["bandwidth_gbs"]) * 10**9)
    actual = figures.ridges[row["precision"]][level]
    assert abs(actual / expected - 1) <= TOLERANCE, (
        f"{row['device']} {row['precision']} ridge {float(actual):.4g} vs reference"
        f" {float(expected):.4g} ({row['table']}, {row['section']})"
    )
