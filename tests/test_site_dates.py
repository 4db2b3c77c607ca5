"""Any calendar date a spec's version may carry builds: the pages show it as written, and
the one timestamp that must fit 32 bits (the gzip header of `sitemap.xml.gz`) is clamped
to 1970-01-01 .. 2106-02-07."""

from __future__ import annotations

import datetime
import gzip
import re
import shutil
import struct
from pathlib import Path

import pytest

from rooflinec.cli.main import main
from rooflinec.site.plugin import sitemap_date
from tests.specfactory import without_named_deployments

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
VERSION_DATE = re.compile(r"(\{version: \d+, date: )\d{4}-\d{2}-\d{2}")
KEEP = {"nvidia-h100-sxm.yaml", "amd-mi300x.yaml"}

pytest.importorskip("mkdocs")


def _specs_dated(root: Path, date: str) -> Path:
    """Two devices and every kernel and method of the bundled catalog, every version of
    every spec dated `date` (so it is also the newest date, the one mkdocs stamps)."""
    specs = root / "specs"
    shutil.copytree(BUNDLED, specs)
    for path in (specs / "devices").glob("*.yaml"):
        if path.name not in KEEP:
            path.unlink()
    without_named_deployments(specs)
    for path in specs.rglob("*.yaml"):
        text = path.read_text("utf-8")
        path.write_text(VERSION_DATE.sub(lambda m: m.group(1) + date, text), "utf-8")
    return specs


def _gzip_mtime(path: Path) -> int:
    """The MTIME field of a gzip member's header (bytes 4..7, little endian)."""
    return int(struct.unpack("<I", path.read_bytes()[4:8])[0])


def _seconds(day: str) -> int:
    moment = datetime.datetime.fromisoformat(day).replace(tzinfo=datetime.UTC)
    return int(moment.timestamp())


@pytest.mark.parametrize(
    ("date", "stamped"),
    [
        ("2106-02-08", "2106-02-07"),
        ("9999-12-31", "2106-02-07"),
        ("1969-12-31", "1970-01-01"),
        ("0001-01-01", "1970-01-01"),
        ("2106-02-07", "2106-02-07"),
        ("1970-01-01", "1970-01-01"),
    ],
)
def test_any_version_date_builds(
    date: str, stamped: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check` and `build` both pass; the changelog shows the date as written; the gzip
    header of the sitemap carries the date clamped into 32-bit seconds."""
    specs = _specs_dated(tmp_path, date)
    out = tmp_path / "site"
    assert 0 == main(["check", "--specs", str(specs)])
    assert 0 == main(["build", "--specs", str(specs), "--out", str(out)])
    assert "internal error" not in capsys.readouterr().err
    assert date in (out / "changelog.html").read_text("utf-8")
    assert _seconds(stamped) == _gzip_mtime(out / "sitemap.xml.gz")
    with gzip.open(out / "sitemap.xml.gz", "rt", encoding="utf-8") as unpacked:
        assert (out / "sitemap.xml").read_text("utf-8") == unpacked.read()


def test_sitemap_date_keeps_dates_in_range() -> None:
    """Dates inside the 32-bit range stay as they are; a non-date stamps the epoch."""
    assert "2026-11-30" == sitemap_date("2026-11-30")
    assert "2106-02-07" == sitemap_date("2106-02-08")
    assert "1970-01-01" == sitemap_date("1969-12-31")
    assert "1970-01-01" == sitemap_date("2026-02-30")
