"""Precisions (`precisions.yaml`): a block-scaled format's bytes per value, exactly from
its bits and its block's scale, and the bundled formats' figures."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.assemble.precisions import block_bytes
from tests.specfactory import BUNDLED


def test_bundled_block_scaled_formats() -> None:
    """MXFP4 is (4 + 8/32)/8 = 17/32 B per value, NVFP4 (4 + 8/16)/8 = 9/16 B, MXFP8
    (8 + 8/32)/8 = 33/32 B; each is a width only, with its quoted source."""
    precisions = catalog_or_raise(BUNDLED).precisions
    found = {
        pid: (precisions[pid].bytes, precisions[pid].width_only, precisions[pid].source)
        for pid in ("mxfp4", "nvfp4", "mxfp8")
    }
    expected = {
        "mxfp4": (Fraction(17, 32), True, "float4-mxfp4"),
        "nvfp4": (Fraction(9, 16), True, "cutile-nvfp4"),
        "mxfp8": (Fraction(33, 32), True, "te-mxfp8"),
    }
    assert expected == found


def test_group_scaled_integers() -> None:
    """4-bit integers with a 16-bit scale per 128 are 4.125 bits, 33/64 B per value."""
    assert Fraction(33, 64) == block_bytes(Fraction(4), (16, 128))


@given(
    bits=st.fractions(min_value=Fraction(1, 8), max_value=64).filter(lambda f: f > 0),
    scale_bits=st.integers(1, 64),
    per=st.integers(1, 1 << 20),
)
def test_a_block_of_values_holds_its_values_and_one_scale(
    bits: Fraction, scale_bits: int, per: int
) -> None:
    """`per` values of a block-scaled format take exactly `per` × bits plus one scale's
    bits; without a scale, bits / 8 bytes each."""
    assert per * bits + scale_bits == per * 8 * block_bytes(bits, (scale_bits, per))
    assert bits / 8 == block_bytes(bits, None)
