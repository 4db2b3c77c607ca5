"""The memory ledger: reference figures, exact solving of max_batch and max_context, the
fewest chips that fit, and where a pass that does not fit is shown.

Expected figures are worked out by hand from the configurations quoted in the model
specs, with Python integers and Fractions, never through rooflinec's ledger code.
"""

from __future__ import annotations

import dataclasses
import io
import json
from fractions import Fraction
from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import ONE_CHIP, Deployment, LedgerTerm, MemoryLedger, Model
from rooflinec.cli.main import main
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.memory import NO_L_NOTE, MemoryFit, evaluate_fit
from rooflinec.formulas import parse_formula
from tests.specfactory import BUNDLED, copy_bundled

H100 = "nvidia-h100-sxm"
GB = 10**9
GIB = 2**30


@cache
def compiled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def model(model_id: str) -> Model:
    return compiled().catalog.models[model_id]


def ledger(model_id: str) -> MemoryLedger:
    found = model(model_id).memory
    assert found is not None
    return found


def fit(
    model_id: str,
    run: dict[str, int],
    capacity: int,
    *,
    with_ledger: MemoryLedger | None = None,
    deployment: Deployment = ONE_CHIP,
) -> MemoryFit:
    phase = next(iter(model(model_id).phases))
    found = evaluate_fit(
        compiled().catalog,
        model(model_id),
        phase,
        "bf16",
        Fraction(capacity),
        deployment,
        run=run,
        ledger=with_ledger,
    )
    assert found is not None
    return found


def llm_analysis_ledger() -> MemoryLedger:
    """test-13b's ledger with llm-analysis' tp1 example settings: no reserve and
    6.56 MB of activations per sequence (`decode_activation_memory_per_gpu`)."""
    base = ledger("test-13b")
    activations = LedgerTerm("6.56 MB", None, Fraction(6_560_000), base.location)
    return dataclasses.replace(base, activations=activations, reserve=Fraction(0))


# ------------------------------------------------------------------ reference figures


def test_llm_analysis_tp1_decode_max_batch_is_32() -> None:
    """llm-analysis (d841e40, examples/fastertransformer/outputs_infer, tp1 summary):
    weight_memory_per_gpu 25,680,609,280 B, kv_cache_memory_per_gpu 427,622,400 B for
    522 tokens at batch 1, and decode_max_batch_size_per_gpu 32 on a 40 GB A100:
    (40 GB - 25.68 GB) / (427.62 MB + 6.56 MB) = 32.98 -> 32."""
    run = {"b": 1, "s": 1, "L": 522}
    found = fit("test-13b", run, 40 * GB, with_ledger=llm_analysis_ledger())
    assert 40 * (12 * 5120**2) * 2 + 50272 * 5120 * 2 == 25_680_609_280
    assert Fraction(25_680_609_280) == found.ledger.weights
    assert Fraction(427_622_400) == found.ledger.kv_cache
    assert Fraction(6_560_000) == found.ledger.activations
    assert Fraction(0) == found.ledger.reserve
    assert 32 == (40 * GB - 25_680_609_280) // (427_622_400 + 6_560_000)
    assert (True, 32) == (found.fits, found.max_batch)


def test_llm_analysis_tp1_in_gib_would_give_39() -> None:
    """llm-analysis' current code sizes the A100's 40 GB as 40 GiB: 39 sequences."""
    run = {"b": 1, "s": 1, "L": 522}
    found = fit("test-13b", run, 40 * GIB, with_ledger=llm_analysis_ledger())
    assert 39 == found.max_batch


def test_llama_3_70b_weights_and_cache_per_token() -> None:
    """70,553,706,496 parameters at BF16 and 327,680 B (320 KiB) of KV per token."""
    found = fit("llama-3-70b", {"b": 1, "s": 1, "L": 1}, 80 * GB)
    assert Fraction(2 * 70_553_706_496) == found.ledger.weights
    assert Fraction(327_680) == found.ledger.kv_cache
    assert 320 * 1024 == 327_680


def test_llama_3_70b_does_not_fit_one_80_gb_chip_and_fits_two() -> None:
    """Decode at b = 1, L = 2,048: 141 GB of weights do not fit one H100; two chips at
    tp = 2 hold 70.6 GB of weights each, with the cache and the 8 GB reserve."""
    row = compiled().model_result("llama-3-70b", "decode-b1-l2048", H100, "bf16")
    assert row is not None
    assert (False, 2) == (row.fits, row.needs_chips)
    assert (None, None) == (row.max_batch, row.max_context)
    two = fit("llama-3-70b", {"b": 1, "s": 1, "L": 2048}, 80 * GB, deployment=Deployment(tp=2))
    assert two.fits is True
    assert two.ledger.total <= 80 * GB < two.ledger.total + 2 * GB


def test_llama_3_70b_batch_32_at_8192_keys_needs_four() -> None:
    """b = 32, L = 8,192: 85.9 GB of KV cache beside 141 GB of weights: four chips."""
    row = compiled().model_result("llama-3-70b", "decode-b32-l8192", H100, "bf16")
    assert row is not None and row.memory is not None
    assert Fraction(32 * 8192 * 327_680) == row.memory["kv_cache"]
    assert 85_899_345_920 == 32 * 8192 * 327_680
    assert (False, 4) == (row.fits, row.needs_chips)


def test_mixtral_counts_every_expert() -> None:
    """Mixtral 8x7B's weights hold all 8 experts of every layer: 46,702,792,704
    parameters, though a token routes through 2."""
    found = fit("mixtral-8x7b", {"b": 1, "s": 1, "L": 1}, 80 * GB)
    layer = 2 * 4096**2 + 2 * 4096 * 1024 + 8 * 3 * 4096 * 14336 + 4096 * 8 + 2 * 4096
    params = 32 * layer + 2 * 32000 * 4096 + 4096
    assert 46_702_792_704 == params
    assert Fraction(2 * params) == found.ledger.weights


def test_w4a16_weights_follow_the_ledger_width() -> None:
    """The w4a16 ledger binds wb to int4: the layers' projections at 0.5 B, the rest
    at BF16."""
    found = fit("llama-3-8b-w4a16", {"b": 1, "s": 1, "L": 1}, 80 * GB)
    projections = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
    rest = 32 * 2 * 4096 + 2 * 128256 * 4096 + 4096
    assert Fraction(projections, 2) + 2 * rest == found.ledger.weights


# ------------------------------------------------------------------ solving


def test_a_ledger_without_an_l_term_says_every_l_fits() -> None:
    """With no cache, max_context is null and the note says why."""
    no_cache = dataclasses.replace(ledger("llama-3-8b"), kv_per_token=None)
    found = fit("llama-3-8b", {"b": 1, "s": 1, "L": 2048}, 80 * GB, with_ledger=no_cache)
    assert (None, NO_L_NOTE) == (found.max_context, found.max_context_note)
    assert found.max_batch is not None


def windowed(window: int) -> MemoryLedger:
    """Llama 3 8B's ledger with a sliding window: a non-linear cache, solved by search."""
    base = ledger("llama-3-8b")
    names = ("b", "L", "kv_per_token")
    formula = parse_formula(f"b*min(L, {window})*kv_per_token", names, reserved=("w",))
    kv = LedgerTerm(formula.text, formula, None, base.location)
    return dataclasses.replace(base, kv=kv)


def test_a_windowed_cache_fits_every_context_beyond_its_window() -> None:
    """b*min(L, W)*kv_per_token stops growing at W: if L = W fits, every L does."""
    found = fit("llama-3-8b", {"b": 8, "s": 1, "L": 2048}, 80 * GB, with_ledger=windowed(4096))
    assert (None, NO_L_NOTE) == (found.max_context, found.max_context_note)


def test_a_windowed_cache_gives_the_largest_batch() -> None:
    """Solved by search: b fits and b + 1 does not, checked on the ledger itself."""
    w = windowed(4096)
    found = fit("llama-3-8b", {"b": 1, "s": 1, "L": 8192}, 80 * GB, with_ledger=w)
    b = found.max_batch
    assert b is not None
    assert fit("llama-3-8b", {"b": b, "s": 1, "L": 8192}, 80 * GB, with_ledger=w).fits
    assert not fit("llama-3-8b", {"b": b + 1, "s": 1, "L": 8192}, 80 * GB, with_ledger=w).fits


def test_a_device_without_capacity_has_no_fit() -> None:
    """No DRAM capacity: fits, reserve, capacity and the searches are null."""
    found = evaluate_fit(compiled().catalog, model("llama-3-8b"), "decode-b1-l2048", "bf16", None)
    assert found is not None
    assert (None, None, None, None) == (
        found.fits,
        found.ledger.capacity,
        found.ledger.reserve,
        found.max_batch,
    )


MODELS = st.sampled_from(["test-13b", "llama-3-8b", "llama-3-70b", "mixtral-8x7b"])


@settings(max_examples=60, deadline=None)
@given(
    model_id=MODELS,
    b=st.integers(1, 512),
    L=st.integers(1, 65536),
    capacity=st.integers(8, 400),
    window=st.sampled_from([None, 1024]),
)
def test_fits_is_monotone_and_max_batch_is_the_largest(
    model_id: str, b: int, L: int, capacity: int, window: int | None
) -> None:
    """A larger b or L never turns a non-fit into a fit; max_batch fits and one more
    sequence does not; max_context likewise for keys."""
    cap = capacity * GB
    use = windowed(window) if window is not None and model_id == "llama-3-8b" else None
    run = {"b": b, "s": 1, "L": L}
    here = fit(model_id, run, cap, with_ledger=use)
    for bigger in ({"b": b + 1, "s": 1, "L": L}, {"b": b, "s": 1, "L": L + 1}):
        if not here.fits:
            assert not fit(model_id, bigger, cap, with_ledger=use).fits
    if here.max_batch is not None:
        at = fit(model_id, {**run, "b": here.max_batch}, cap, with_ledger=use)
        past = fit(model_id, {**run, "b": here.max_batch + 1}, cap, with_ledger=use)
        assert (True, False) == (at.fits, past.fits)
    else:
        assert not fit(model_id, {**run, "b": 1}, cap, with_ledger=use).fits
    if here.max_context is not None:
        at = fit(model_id, {**run, "L": here.max_context}, cap, with_ledger=use)
        past = fit(model_id, {**run, "L": here.max_context + 1}, cap, with_ledger=use)
        assert (True, False) == (at.fits, past.fits)


# ------------------------------------------------------------------ where it shows


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([args[0], "--specs", str(BUNDLED), *args[1:]], out=out)
    return code, out.getvalue()


def test_table_prints_does_not_fit_in_place_of_tokens_per_second() -> None:
    """The table's tokens/s cell says how many chips a pass needs, never a rate."""
    code, text = run("compile", "--model", "llama-3-70b", "--device", H100, "--format", "table")
    assert 0 == code
    line = next(x for x in text.splitlines() if "decode-b32-l8192" in x)
    assert "does not fit (needs 4 chips)" in line
    assert "tok/s" not in line


def test_json_keeps_every_figure_of_a_pass_that_does_not_fit() -> None:
    """JSON keeps tokens_per_second and adds fits, memory and the searches."""
    code, text = run(
        "compile",
        "--model",
        "llama-3-70b",
        "--phase",
        "decode-b1-l2048",
        "--device",
        H100,
        "--format",
        "json",
    )
    assert 0 == code
    (row,) = json.loads(text)["models"]
    assert (False, 2, None, None) == (
        row["fits"],
        row["needs_chips"],
        row["max_batch"],
        row["max_context"],
    )
    assert row["tokens_per_second"] > 0
    assert 2 * 70_553_706_496 == row["memory"]["weights"]
    assert 80 * GB == row["memory"]["capacity"]


def test_explain_lists_the_memory_ledger() -> None:
    """explain gives each ledger term with its formula, and no rate when it does not fit."""
    code, text = run(
        "explain", "--model", "llama-3-70b", "--phase", "decode-b1-l2048", "--device", H100
    )
    assert 0 == code
    assert "does not fit (needs 2 chips): no rate is given" in text
    assert "weights = (layers/pp*" in text
    assert "kv cache = b*L*kv_per_token" in text
    assert "reserve = 10% of the capacity = 8,000,000,000 B" in text
    assert "tokens/s\n" not in text.split("6. Memory")[0].split("5. Tokens per second")[1]


def test_no_ledger_or_no_capacity_leaves_the_fit_unknown(tmp_path: Path) -> None:
    """A model without `memory:` and a device without a DRAM capacity give fits null
    (nothing is claimed either way), the CSV leaves the memory cells empty, and the table
    keeps tokens per second."""
    specs = copy_bundled(tmp_path)
    model_file = specs / "models" / "test-13b.yaml"
    text = model_file.read_text("utf-8")
    start = text.index("\nmemory:\n")
    end = text.index("\nsources:\n")
    model_file.write_text(text[:start] + text[end:], "utf-8")
    device_file = specs / "devices" / "nvidia-h100-sxm.yaml"
    lines = device_file.read_text("utf-8").split("\n")
    at = lines.index("    capacity:")
    device_file.write_text("\n".join(lines[:at] + lines[at + 4 :]), "utf-8")
    found = compile_catalog(catalog_or_raise(specs))
    row = found.model_result("test-13b", "decode", "nvidia-l4", "bf16")
    assert row is not None
    assert (None, None, None, None) == (row.fits, row.memory, row.max_batch, row.needs_chips)
    h100 = found.model_result("llama-3-70b", "decode-b1-l2048", H100, "bf16")
    assert h100 is not None and h100.memory is not None
    assert (None, None, None) == (h100.fits, h100.memory["capacity"], h100.memory["reserve"])
    out = io.StringIO()
    args = ["compile", "--specs", str(specs), "--model", "test-13b", "--format", "csv"]
    assert 0 == main([*args, "--device", "nvidia-l4"], out=out)
    header, first = out.getvalue().splitlines()[:2]
    cells = dict(zip(header.split(","), first.split(","), strict=True))
    assert ("", "", "") == (cells["fits"], cells["memory_weights [B]"], cells["max_batch"])


def test_a_windowed_cache_gives_the_searched_largest_batch() -> None:
    """gpt-oss-120b's `kv` takes min(L, W) in its sliding layers: a line in b at each L,
    so its largest batch comes in closed form, and it is the one the search over b finds,
    at contexts below, at and past the window, on one chip and on eight."""
    from rooflinec.engine import memory

    compiled = compile_catalog(catalog_or_raise(BUNDLED))
    catalog = compiled.catalog
    model = catalog.models["gpt-oss-120b"]
    assert model.memory is not None
    checked = 0
    for deployment in (ONE_CHIP, Deployment(tp=8, ep=8)):
        for L in (100, 128, 129, 4096, 131072):
            run = {"b": 1, "s": 1, "L": L}
            terms = memory._Terms(catalog, model, model.memory, run, "bf16", deployment, {})
            assert terms.line_in_b(L) is not None
            for capacity in (Fraction(80 * 10**9), Fraction(192 * 10**9)):
                room = capacity - model.memory.reserve * capacity - terms.weights
                expected = memory._largest(
                    lambda b, t=terms, at=L, r=room: t.kv_at(b, at) + t.activations_at(b, at) <= r
                )
                assert expected == memory._max_batch(terms, room, L)
                checked += 1
    assert checked == 20


def test_a_windowed_cache_gives_the_searched_largest_context() -> None:
    """gpt-oss-120b's cache rises by a line past its window: the largest context comes
    from that line's guess, checked on both sides, and is the one the search over L
    finds, for every batch from 1 to 64 on one chip and on eight."""
    from rooflinec.engine import memory

    compiled = compile_catalog(catalog_or_raise(BUNDLED))
    catalog = compiled.catalog
    model = catalog.models["gpt-oss-120b"]
    assert model.memory is not None
    for deployment in (ONE_CHIP, Deployment(tp=8, ep=8)):
        run = {"b": 1, "s": 1, "L": 4096}
        terms = memory._Terms(catalog, model, model.memory, run, "bf16", deployment, {})
        room = Fraction(80 * 10**9) * (1 - model.memory.reserve) - terms.weights
        for b in (1, 2, 7, 22, 64):

            def used(L: int, b: int = b, t: memory._Terms = terms) -> Fraction:
                return t.kv_at(b, L) + t.activations_at(b, L)

            expected = memory._largest(lambda L, u=used, r=room: u(L) <= r)
            assert expected == memory._largest_rising(used, room)
