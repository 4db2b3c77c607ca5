"""The reader's prices on the site: the plugin option `prices`, validated in one line, kept
on the `Site`, and shown on device pages labelled as the reader's beside the quoted price
or "no quoted price"."""

from __future__ import annotations

from fractions import Fraction

import pytest
from mkdocs.exceptions import PluginError

from rooflinec.engine.compiler import Compiled
from rooflinec.pipeline import compiled_or_raise
from rooflinec.site.pages.devices import device_page
from rooflinec.site.pages.model import Site
from rooflinec.site.plugin import reader_prices
from tests.specfactory import BUNDLED

H100 = "nvidia-h100-sxm"


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    return compiled_or_raise(BUNDLED)


def test_prices_parse_with_or_without_the_space(compiled: Compiled) -> None:
    """`2.5 USD/h` and `2.5USD/h` are both 2.5 USD per chip-hour."""
    devices = compiled.catalog.devices
    assert {H100: Fraction(5, 2), "amd-mi300x": Fraction(3)} == reader_prices(
        {H100: "2.5 USD/h", "amd-mi300x": "3USD/h"}, devices
    )


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ({"no-such-device": "2.5 USD/h"}, "unknown device 'no-such-device'"),
        ({H100: "2.5"}, "missing unit"),
        ({H100: "2.5 GB"}, "a price per hour"),
        ({H100: "-1 USD/h"}, "negative"),
        ({H100: "0 USD/h"}, "greater than zero"),
        ({H100: 2.5}, "is not a price"),
        ({H100: "1e400 USD/h"}, "exponent"),
    ],
)
def test_a_bad_price_is_one_clear_line(
    compiled: Compiled, option: dict[str, object], said: str
) -> None:
    """An unknown device or a value that is not a price stops the build with one line
    naming the option."""
    with pytest.raises(PluginError) as caught:
        reader_prices(option, compiled.catalog.devices)
    message = str(caught.value)
    assert 1 == len(message.splitlines())
    assert message.startswith("rooflinec: prices: ")
    assert said in message


def test_device_page_shows_no_quoted_price_and_the_readers(compiled: Compiled) -> None:
    """No bundled device quotes a price: the page says "no quoted price"; a reader's price
    shows labelled as the reader's, on that device's page only."""
    site = Site.of(compiled, svg=False, prices={H100: Fraction(5, 2)})
    assert {H100: Fraction(5, 2)} == dict(site.prices)
    priced = device_page(site, compiled.catalog.devices[H100]).markdown
    other = device_page(site, compiled.catalog.devices["amd-mi300x"]).markdown
    assert "**Price:** no quoted price" in priced
    assert "**Reader's price:** 2.5 USD/h per chip-hour: the reader's price" in priced
    assert "**Price:** no quoted price" in other
    assert "Reader's price" not in other
