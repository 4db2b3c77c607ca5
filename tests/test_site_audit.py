"""Audit pages, the conflicts and sources pages, catalog exports and schemas in the site."""

from __future__ import annotations

import datetime
import html
import posixpath
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown  # type: ignore[import-untyped]
import pytest

from rooflinec.outputs import catalog as catalog_export
from rooflinec.pipeline import checked
from rooflinec.provenance import conflicts, device_trails, trails
from rooflinec.resources import schemas_dir
from rooflinec.site.build import build_site
from rooflinec.site.escape import sanitize
from rooflinec.site.pages.audit import audit_layout, exact_number, figure_anchor, figure_name
from rooflinec.site.pages.common import GeneratedPage, PageLimits
from rooflinec.site.pages.listing import pages as site_pages
from rooflinec.site.pages.model import Site
from tests.specfactory import without_named_deployments

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "specs"
PAGE_LIMIT = 50 * 1024
EXTENSIONS = ["tables", "attr_list", "md_in_html", "admonition", "toc"]
PAYLOAD = "<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)> | `t`"


def _compile(folder: Path) -> Any:
    compiled, diagnostics, _ = checked(folder)
    assert compiled is not None, [str(d) for d in diagnostics]
    return compiled


def _pages(compiled: Any) -> dict[str, GeneratedPage]:
    return {p.path: p for p in site_pages(Site.of(compiled, svg=False))}


def _conflicts(pages: dict[str, GeneratedPage]) -> str:
    """The conflicts page and its continuations (conflicts-2.md, ...), in page order."""
    parts = [path for path in pages if re.fullmatch(r"conflicts(-\d+)?\.md", path)]
    parts.sort(key=lambda path: int(re.sub(r"\D", "", path) or 1))
    assert "conflicts.md" == parts[0]
    return "".join(pages[path].markdown for path in parts)


def _text(markdown_text: str) -> str:
    """The page's visible text after Markdown, the sanitiser and entity decoding."""
    body = sanitize(markdown.markdown(markdown_text, extensions=EXTENSIONS))
    return html.unescape(re.sub(r"<[^>]+>", "", body))


class _Attributes(HTMLParser):
    """The name of every attribute of every start tag."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names += [name for name, _ in attrs]


@pytest.fixture(scope="module")
def compiled() -> Any:
    return _compile(BUNDLED)


@pytest.fixture(scope="module")
def bundled_site(compiled: Any) -> Site:
    return Site.of(compiled, svg=False)


@pytest.fixture(scope="module")
def pages(bundled_site: Site) -> dict[str, GeneratedPage]:
    return {p.path: p for p in site_pages(bundled_site)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit-site") / "site"
    build_site(BUNDLED, out)
    return out


# --------------------------------------------------------------------------- audit pages


def test_every_device_has_an_audit_page_linked_from_its_page(
    compiled: Any, pages: dict[str, GeneratedPage]
) -> None:
    """`devices/<id>/audit.md` exists for every device and its device page links to it."""
    for device in compiled.catalog.devices:
        assert f"devices/{device}/audit.md" in pages, device
        assert f"({device}/audit.md)" in pages[f"devices/{device}.md"].markdown, device


def test_every_figure_has_a_section_on_its_devices_audit_pages(
    compiled: Any, bundled_site: Site, pages: dict[str, GeneratedPage]
) -> None:
    """Each trail of provenance appears once, under its own anchor, on its device's pages."""
    for trail in trails(compiled.catalog, today=bundled_site.catalog_date):
        target = audit_layout(bundled_site).target(trail.device, trail.field)
        path, _, anchor = target.partition("#")
        assert anchor == figure_anchor(trail)
        assert pages[path].markdown.count(f"{{#{anchor}}}") == 1, target


def test_h100_bf16_trail_shows_source_quote_steps_and_final(
    bundled_site: Site, pages: dict[str, GeneratedPage]
) -> None:
    """Printed 1979 TFLOP/s with sparsity, ÷ 2 with its exact factor, the final 989.5."""
    trail = next(
        t
        for t in device_trails(bundled_site.catalog, "nvidia-h100-sxm")
        if t.field == "compute.bf16"
    )
    assert trail.source is not None and trail.quote
    text = _text(pages["devices/nvidia-h100-sxm/audit.md"].markdown)
    section = text[text.index("BF16 or FP16 peak conflict") :]
    section = section[: section.index("FP8 peak")]
    assert trail.source.title in section
    assert trail.quote in section
    assert "1979 TFLOP/s, with 2:4 structured sparsity" in section
    assert "÷ 2: printed with 2:4 structured sparsity" in section and "× 0.5" in section
    assert "× the sustained compute share, 100%" in section
    assert "The results use 989.5 TFLOP/s." in section
    age = (bundled_site.catalog_date - datetime.date.fromisoformat(trail.source.read)).days
    assert f"{age} days before {bundled_site.catalog_date.isoformat()}" in section


def test_gaudi3_bf16_alternatives_show_source_dense_value_and_spread(
    pages: dict[str, GeneratedPage],
) -> None:
    """1678 (used) against 1835 (Intel, +9.36 %) is a conflict; the vector rate is not compared."""
    page = pages["devices/intel-gaudi3/audit.md"].markdown
    text = _text(page)
    section = text[text.index("BF16 or FP16 peak conflict") :]
    section = section[: section.index("FP8 peak")]
    assert "The results use 1678 TFLOP/s." in section
    assert "1835 TFLOP/s, matrix pipe" in section and "+9.36%" in section
    assert "Intel Gaudi 3 AI Accelerator: Architected for Gen AI" in section
    assert "not compared: vector pipe" in section
    body = html.unescape(sanitize(markdown.markdown(page, extensions=EXTENSIONS)))
    assert '<span class="rooflinec-conflict">+9.36%</span>' in body


def test_sustained_share_and_binary_capacity_use_exact_factors(tmp_path: Path) -> None:
    """A 92 % memory share shows × 0.92 and the exact product; a GiB capacity its bytes."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    device = specs / "devices" / "nvidia-l40s.yaml"
    text = device.read_text("utf-8")
    assert "  memory: 100%" in text and "bandwidth: 864 GB/s" in text
    device.write_text(text.replace("  memory: 100%", "  memory: 92%"), "utf-8")
    page = _text(_pages(_compile(specs))["devices/nvidia-l40s/audit.md"].markdown)
    assert "× the sustained memory share, 92%" in page and "× 0.92" in page
    assert "The results use 794.88 GB/s." in page  # 864 × 0.92, exactly


def test_exact_numbers() -> None:
    """Factors print exactly: terminating decimals as decimals, others as fractions."""
    from fractions import Fraction

    assert exact_number(Fraction(1, 2)) == "0.5"
    assert exact_number(Fraction(23, 25)) == "0.92"
    assert exact_number(Fraction(2, 3)) == "2/3"
    assert exact_number(Fraction(1979, 2)) == "989.5"
    assert exact_number(Fraction(-3, 8)) == "-0.375"


def test_long_devices_split_their_audit_across_pages(compiled: Any) -> None:
    """A small budget splits a device's audit; links from the summary and conflicts follow."""
    bundled_site = Site.of(compiled, svg=False, limits=PageLimits(audit_page_budget=3000))
    pages = {p.path: p for p in site_pages(bundled_site)}
    assert "devices/intel-gaudi3/audit-2.md" in pages
    first = pages["devices/intel-gaudi3/audit.md"].markdown
    assert "Pages: **1** · [2](audit-2.md)" in first
    target = audit_layout(bundled_site).target("intel-gaudi3", "compute.fp8")
    path, _, anchor = target.partition("#")
    assert path != "devices/intel-gaudi3/audit.md"
    assert f"{{#{anchor}}}" in pages[path].markdown
    assert f"({posixpath.relpath(path, 'devices/intel-gaudi3')}#{anchor})" in first
    assert f"({path}#{anchor})" in _conflicts(pages)


# --------------------------------------------------------------------------- conflicts


def test_conflicts_page_lists_every_conflict_largest_first(
    compiled: Any, bundled_site: Site, pages: dict[str, GeneratedPage]
) -> None:
    """One row per conflicting figure, ordered by the largest relative difference across
    the conflicts page and its continuations."""
    found = conflicts(compiled.catalog, today=bundled_site.catalog_date)
    page = _conflicts(pages)
    rows = [html.unescape(line) for line in page.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(rows) == len(found) > 0
    spreads = [
        abs(float(re.findall(r"\| ([+−][0-9.]+)% \|$", row)[0].replace("−", "-"))) for row in rows
    ]
    assert spreads == sorted(spreads, reverse=True)
    for trail in found:
        assert f"({audit_layout(bundled_site).target(trail.device, trail.field)})" in page


def test_gaudi3_bf16_is_on_the_conflicts_page_with_both_values(
    pages: dict[str, GeneratedPage],
) -> None:
    """The method's 1678 against Intel's 1835, and the third-party 459 that is further off."""
    body = sanitize(markdown.markdown(pages["conflicts.md"].markdown, extensions=EXTENSIONS))
    row = next(r for r in body.split("<tr>") if "intel-gaudi3/audit.md#compute-bf16" in r)
    row = html.unescape(re.sub(r"<[^>]+>", " ", row))
    row = re.sub(r"\s+", " ", row)
    assert "1678 TFLOP/s" in row and "1835 TFLOP/s +9.36%" in row
    assert "459 TFLOP/s −72.6%" in row
    assert "Intel (vendor)" in row and "(third party)" in row


# --------------------------------------------------------------------------- sources


def test_sources_page_shows_ages_and_links_figures_to_their_audit(
    bundled_site: Site, pages: dict[str, GeneratedPage]
) -> None:
    """Every use of a source says when it was read and how long ago; figures link to audits."""
    page = html.unescape(
        "".join(p.markdown for path, p in pages.items() if re.match(r"sources(-\d+)?\.md", path))
    )
    today = bundled_site.catalog_date.isoformat()
    assert f"Ages are counted to **{today}**" in page
    assert re.search(r"read 2026-10-25, \d+ days ago", page)
    target = audit_layout(bundled_site).target("intel-gaudi3", "compute.bf16")
    assert f"[BF16 or FP16 peak]({target})" in page
    assert "(alternative 1835 TFLOP/s)" in page


def test_stale_sources_are_marked(tmp_path: Path) -> None:
    """A source read more than 18 months before the catalog date is marked stale everywhere."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    device = specs / "devices" / "intel-gaudi3.yaml"
    text = device.read_text("utf-8")
    start = text.index("  intel-gaudi3-hotchips:")
    read = text.index("read: 2026-10-25", start)
    # Read 766 days (25.2 months of 30.44 days) before the catalog date, its newest version
    # entry, which the edit leaves alone.
    catalog_date = Site.of(_compile(specs), svg=False).catalog_date
    old = (catalog_date - datetime.timedelta(days=766)).isoformat()
    device.write_text(text[:read] + f"read: {old}" + text[read + 16 :], "utf-8")
    compiled = _compile(specs)
    assert catalog_date == Site.of(compiled, svg=False).catalog_date
    pages = _pages(compiled)
    audit = pages["devices/intel-gaudi3/audit.md"].markdown
    assert '<span class="rooflinec-stale">stale</span>' in audit
    assert f"read {old}, 2 years 1 month before {catalog_date.isoformat()}" in _text(audit)
    sources = "".join(p.markdown for path, p in pages.items() if path.startswith("sources"))
    assert "1 source is stale" in sources
    stale = f'read {old}, 2 years 1 month ago <span class="rooflinec-stale">stale</span>'
    assert stale in html.unescape(sources)


# --------------------------------------------------------------------------- safety


def test_spec_text_in_trails_stays_inert(tmp_path: Path) -> None:
    """Markup in an alternative's quote and note, a source's title and publisher is text."""
    from ruamel.yaml import YAML

    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    yml = YAML(typ="rt")
    yml.width = 4096
    path = specs / "devices" / "intel-gaudi3.yaml"
    device = yml.load(path.read_text("utf-8"))
    alt = device["compute"]["bf16"]["alternatives"][0]
    alt["quote"] = PAYLOAD
    alt["note"] = PAYLOAD
    source = device["sources"]["intel-gaudi3-hotchips"]
    source["title"] = PAYLOAD
    source["publisher"] = PAYLOAD
    with path.open("w", encoding="utf-8") as f:
        yml.dump(device, f)
    pages = _pages(_compile(specs))
    for name in ("devices/intel-gaudi3/audit.md", "conflicts.md", "sources.md"):
        body = sanitize(markdown.markdown(pages[name].markdown, extensions=EXTENSIONS))
        assert "<script" not in body and "<img" not in body, name
        assert not re.search(r"href=[\"']?\s*javascript:", body, re.I), name
        parser = _Attributes()
        parser.feed(body)
        assert not [a for a in parser.names if a.startswith("on")], name
        assert PAYLOAD in html.unescape(re.sub(r"<[^>]+>", "", body)), name


# --------------------------------------------------------------------------- the built site


def test_audit_and_conflicts_pages_in_the_built_site(site: Path, compiled: Any) -> None:
    """Every device's audit page is built, small, and reachable from the device page."""
    for device in compiled.catalog.devices:
        page = site / "devices" / device / "audit.html"
        assert page.is_file(), device
        assert page.stat().st_size < PAGE_LIMIT, device
        assert f'href="{device}/audit.html"' in (site / "devices" / f"{device}.html").read_text(
            "utf-8"
        )
    conflicts_html = site / "conflicts.html"
    assert conflicts_html.stat().st_size < PAGE_LIMIT
    text = conflicts_html.read_text("utf-8")
    assert 'href="devices/intel-gaudi3/audit.html#compute-bf16"' in text
    audit = (site / "devices" / "intel-gaudi3" / "audit.html").read_text("utf-8")
    assert 'id="compute-bf16"' in audit and 'href="../../catalog.csv"' in audit


def test_catalog_exports_and_schemas_are_published(site: Path, compiled: Any) -> None:
    """catalog.csv/json as `rooflinec export` writes them, and every schema under schemas/."""
    today = Site.of(compiled, svg=False).catalog_date
    assert (site / "catalog.csv").read_text("utf-8") == catalog_export.catalog_csv(
        compiled.catalog, today=today
    )
    assert (site / "catalog.json").read_text("utf-8") == catalog_export.catalog_json(
        compiled.catalog, today=today
    )
    schemas = sorted(schemas_dir().glob("*.json"))
    assert schemas
    for schema in schemas:
        assert (site / "schemas" / schema.name).read_bytes() == schema.read_bytes()
    spec_language = (site / "spec-language.html").read_text("utf-8")
    for schema in schemas:
        assert f'href="schemas/{schema.name}"' in spec_language


def test_a_plain_build_is_not_a_published_version(site: Path) -> None:
    """No build info or changes file; the changes page says no previous version is known."""
    assert not (site / "rooflinec-build.json").exists()
    assert not (site / "changes.json").exists()
    changes = (site / "changes.html").read_text("utf-8")
    assert "This build is not a published version" in changes
    assert '"provider":"mike"' not in changes.replace(" ", "")  # no selector without mike


def test_pages_stay_small_with_many_alternatives_and_conflicts(tmp_path: Path) -> None:
    """Devices with 45 long alternatives on a figure splits its audit; no page reaches 50 KB."""
    specs = tmp_path / "specs"
    shutil.copytree(BUNDLED, specs)
    keep = {
        "nvidia-h100-sxm.yaml",
        "amd-mi300x.yaml",
        "intel-gaudi3.yaml",
        "nvidia-b200.yaml",
        "google-tpu-v5p.yaml",
    }
    for path in (specs / "devices").glob("*.yaml"):
        if path.name not in keep:
            path.unlink()
    without_named_deployments(specs)  # the named systems are on the devices removed
    h100 = (specs / "devices" / "nvidia-h100-sxm.yaml").read_text("utf-8")
    note = "A long note about where this value comes from and why it differs. " * 4
    alternatives = "".join(
        f"      - {{value: {900 + n} TFLOP/s, source: nvidia-h100, quote: "
        f'"{"Quoted words of the data sheet " * 3}{n}", note: "{note}"}}\n'
        for n in range(45)
    )
    for n in range(12):
        clone = h100.replace("id: nvidia-h100-sxm", f"id: clone-{n:02d}").replace(
            "name: NVIDIA H100 SXM", f"name: Clone {n:02d}"
        )
        clone = re.sub(
            r"(  bf16:\n(?:    .*\n)*?)    alternatives:\n",
            lambda m: m.group(1) + "    alternatives:\n" + alternatives,
            clone,
            count=1,
        )
        (specs / "devices" / f"clone-{n:02d}.yaml").write_text(clone, "utf-8")
    out = tmp_path / "site"
    build_site(specs, out, options={"svg": False})
    assert (out / "devices" / "clone-00" / "audit-2.html").is_file()
    assert (out / "conflicts-2.html").is_file()
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in out.rglob("*.html")}
    assert {name: size for name, size in sizes.items() if size >= PAGE_LIMIT} == {}
    # The device page's sources name a figure's alternatives from one source once.
    device_page = (out / "devices" / "clone-00.html").read_text("utf-8")
    cited = "BF16 or FP16 peak (45 alternatives: 900 TFLOP/s, 901 TFLOP/s, 902 TFLOP/s and 42 more)"
    assert cited in device_page
    # The audit page holding that figure (the first or a later one) says where the rest are.
    rest = 'are in <a href="../../catalog.json">catalog.json</a>'
    audits = sorted((out / "devices" / "clone-00").glob("audit*.html"))
    assert [a.name for a in audits if rest in a.read_text("utf-8")] != []


def test_figure_names(compiled: Any) -> None:
    """Peaks are named by precision label, memory figures by level and kind."""
    names = {t.field: figure_name(t) for t in device_trails(compiled.catalog, "intel-gaudi3")}
    assert names["compute.bf16"] == "BF16 or FP16 peak"
    assert names["memory.l2"] == "L2 bandwidth"
    assert names["memory.dram.capacity"] == "DRAM capacity"
