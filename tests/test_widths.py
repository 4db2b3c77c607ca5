"""Width symbols: weight-only quantization as a binding of `wb` to a precision's bytes."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Catalog
from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.prose.explain import explain
from tests.specfactory import BUNDLED, TOY_DEVICE, write_specs


def _bundled() -> Catalog:
    return catalog_or_raise(BUNDLED)


def test_w4a16_linear_streams_half_byte_weights() -> None:
    """linear-decode-w4a16 on the H100 at BF16: activations at 2 B, weights at 0.5 B.

    By hand: 2*1*4096*4096 = 33,554,432 FLOP; bytes 2*(4096 + 4096) + 4096*4096/2 =
    8,404,992 B; the DRAM ceiling is 33,554,432 / 8,404,992 × 3.35e12 B/s.
    """
    compiled = compile_catalog(_bundled())
    result = compiled.result("linear-decode-w4a16", "nvidia-h100-sxm", "bf16")
    assert result is not None
    assert 33_554_432 == result.flops
    assert 8_404_992 == result.bytes["dram"]
    assert Fraction(33_554_432, 8_404_992) * Fraction(335 * 10**10) == result.ceilings["dram"]
    assert "dram" == result.limited_by


def test_unbound_width_follows_w() -> None:
    """At FP32 the activations take 4 B and the bound weights stay at 0.5 B."""
    compiled = compile_catalog(_bundled())
    result = compiled.result("linear-decode-w4a16", "nvidia-h100-sxm", "fp32")
    assert result is not None
    assert 4 * (4096 + 4096) + 4096 * 4096 // 2 == result.bytes["dram"]


def test_int4_precision_is_bundled() -> None:
    """int4 is a YAML entry: half a byte, counted in OP."""
    int4 = _bundled().precisions["int4"]
    assert (Fraction(1, 2), "OP", "INT4") == (int4.bytes, int4.unit, int4.label)


def test_explain_names_the_bound_width() -> None:
    """explain shows the width's value and the precision it is bound to."""
    catalog = _bundled()
    result = compile_catalog(catalog).result("linear-decode-w4a16", "nvidia-h100-sxm", "bf16")
    assert result is not None
    text = explain(catalog, result)
    assert "wb = 0.5 B per value    (bytes per weight value; bound to int4, INT4)" in text


def test_grid_case_binds_its_widths(tmp_path: Path) -> None:
    """A grid case's rows stream the bound width too: each row's bytes are those of a plain
    case with that shape and binding, w*(M*K + M*N) + 0.5*K*N at BF16."""
    specs = write_specs(
        tmp_path,
        {"toy": DEVICE},
        {
            "lin": """\
            id: lin
            name: Linear
            description: M tokens through a K x N weight matrix.
            symbols: {M: tokens, N: out, K: in}
            widths: {wb: bytes per weight}
            flops: 2*M*N*K
            bytes:
              dram: w*(M*K + M*N) + wb*K*N
            cases:
              - {id: lin-grid, name: grid, precision: bf16, grid: {M: [1, 3], N: [8], K: [8]},
                 widths: {wb: fp4}}
            """
        },
    )
    out = io.StringIO()
    assert 0 == main(["compile", "--specs", str(specs), "--format", "jsonl"], out=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    got = {(r["shape"]["M"], r["precision"]): r["bytes"]["dram"] for r in rows}
    assert 2 * (1 * 8 + 1 * 8) + 32 == got[(1, "bf16")]
    assert 2 * (3 * 8 + 3 * 8) + 32 == got[(3, "bf16")]
    assert 1 * (3 * 8 + 3 * 8) + 32 == got[(3, "fp8")]


DEVICE = TOY_DEVICE
