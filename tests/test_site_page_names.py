"""Generated pages never take a name a spec's id can have.

Pages in the folders named by ids (`devices/`, `kernels/`, `models/`, `method/`) are
either a spec's own page (`<id>.md`, or a page in its own folder `<id>/...`) or a name
`check` refuses as an id: a model named `tokens` would otherwise lose its page to the
tokens-per-second comparison. The rule is checked against every page the bundled site
generates, so a generated page added later must join the reserved names.
"""

from __future__ import annotations

import posixpath
from typing import Any

import pytest

from rooflinec.assemble.builder import METHOD_EXAMPLES_SUFFIX, METHOD_MODELS_SUFFIX, RESERVED_ID
from rooflinec.pipeline import checked
from rooflinec.site.pages.listing import pages as site_pages
from rooflinec.site.pages.model import Site
from tests.specfactory import BUNDLED


@pytest.fixture(scope="module")
def compiled() -> Any:
    result, diagnostics, _ = checked(BUNDLED)
    assert result is not None, diagnostics
    return result


def _owners(compiled: Any) -> dict[str, set[str]]:
    """The ids whose pages each id folder holds."""
    catalog = compiled.catalog
    return {
        "devices": set(catalog.devices),
        "kernels": set(catalog.kernels),
        "models": set(catalog.models),
        "method": set(catalog.methods),
    }


def _refused_as_id(name: str, methods: set[str], folder: str) -> bool:
    """Whether `check` refuses `name` as an id in `folder` (what a generated page needs)."""
    if RESERVED_ID.match(name):
        return True
    for suffix in (METHOD_MODELS_SUFFIX, METHOD_EXAMPLES_SUFFIX):
        owner = name.removesuffix(suffix)
        if folder == "method" and owner != name and owner in methods:
            return True
    return False


def test_every_generated_page_in_an_id_folder_is_an_id_page_or_reserved(compiled: Any) -> None:
    """Each page under devices/, kernels/, models/, method/ is `<id>.md` or `<id>/...` of
    a spec of that folder, or a name refused as an id: no id can replace it."""
    owners = _owners(compiled)
    site = Site.of(compiled, svg=False)
    generated = [p.path for p in site_pages(site)]
    unclaimed = []
    in_folders = 0
    for path in generated:
        folder, _, rest = path.partition("/")
        if folder not in owners or not rest:
            continue
        in_folders += 1
        first = rest.split("/", 1)[0]
        name = posixpath.splitext(first)[0] if "/" not in rest else first
        if name in owners[folder]:
            continue
        if "/" not in rest and _refused_as_id(name, owners["method"], folder):
            continue
        unclaimed.append(path)
    assert in_folders > 100, "the bundled site's id folders were not seen"
    assert [] == unclaimed


@pytest.mark.parametrize(
    ("name", "reserved"),
    [
        ("index", True),
        ("index-2", True),
        ("tokens", True),
        ("tokens-18", True),
        ("tokens-per-second", False),
        ("llama-tokens", False),
        ("indexer", False),
    ],
)
def test_reserved_page_names(name: str, reserved: bool) -> None:
    """The listing and tokens pages and their numbered next pages are reserved; ids that
    merely contain the words are not."""
    assert reserved == bool(RESERVED_ID.match(name))
