"""Speculative decoding (`--speculate k=K,acceptance=A`): verify passes of k + 1 tokens,
each yielding (1 − α^(k+1))/(1 − α) tokens on average, on the exact request path, the
command line and `plan`."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Deployment, RequestShape, Speculation
from rooflinec.cli.main import main
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.models import RunPoint
from rooflinec.engine.requests import evaluate_request, pass_time
from rooflinec.pipeline import compiled_or_raise
from tests.specfactory import BUNDLED, copy_bundled

DEVICE = "nvidia-h100-sxm"


@pytest.fixture(scope="module")
def bundled() -> Compiled:
    return compiled_or_raise(BUNDLED)


@pytest.mark.parametrize(
    ("k", "acceptance", "expected"),
    [
        (3, Fraction(7, 10), Fraction(7599, 3000)),  # 1 + 0.7 + 0.49 + 0.343 = 2.533
        (3, Fraction(1), Fraction(4)),  # every draft kept: k + 1
        (3, Fraction(0), Fraction(1)),  # none kept: the verify pass's own token
        (1, Fraction(1, 2), Fraction(3, 2)),
        (5, Fraction(9, 10), Fraction(468559, 100000)),
    ],
)
def test_tokens_per_verify_is_the_geometric_sum(
    k: int, acceptance: Fraction, expected: Fraction
) -> None:
    """1 + α + … + α^k, exactly."""
    assert expected == Speculation(k, acceptance).tokens_per_verify


@given(st.integers(1, 64), st.fractions(0, 1))
def test_tokens_per_verify_lies_between_one_and_k_plus_one(k: int, acceptance: Fraction) -> None:
    """A verify pass keeps at least its own token and at most every draft with it."""
    tokens = Speculation(k, acceptance).tokens_per_verify
    assert 1 <= tokens <= k + 1
    assert tokens == sum((acceptance**i for i in range(k + 1)), Fraction(0))


@pytest.mark.parametrize(
    ("k", "acceptance"), [(0, Fraction(1, 2)), (65, Fraction(1, 2)), (3, Fraction(3, 2))]
)
def test_a_speculation_out_of_range_is_refused(k: int, acceptance: Fraction) -> None:
    with pytest.raises(ValueError):
        Speculation(k, acceptance)


def test_itl_is_the_verify_passes_over_the_tokens_they_yield(bundled: Compiled) -> None:
    """Each of the output − 1 tokens costs 1/E of the verify pass (s = k + 1) at L = input
    + j + k; summed pass by pass through the engine, exactly the request's itl."""
    engine = bundled.model_engine
    model = bundled.catalog.models["llama-3-8b"]
    figures = engine.devices[DEVICE]
    spec = Speculation(3, Fraction(7, 10))
    shape = RequestShape(512, 9, spec)
    result = evaluate_request(engine, model.id, DEVICE, "bf16", Deployment(), 2, shape)
    passes = [
        pass_time(
            engine.evaluate(
                model, RunPoint(2, 4, 512 + j + 3), figures, "bf16", engine.latencies.get(DEVICE)
            )
        )
        for j in range(1, 9)
    ]
    assert sum(passes, Fraction(0)) / spec.tokens_per_verify / 8 == result.itl
    assert result.tokens_per_pass == spec.tokens_per_verify
    assert (3, Fraction(7, 10)) == (result.draft_tokens, result.acceptance)


def test_speculation_helps_a_memory_bound_decode_and_costs_at_zero_acceptance(
    bundled: Compiled,
) -> None:
    """Llama 3 8B decodes DRAM bound at batch 1: a 4-token verify pass costs about a
    one-token pass, so at acceptance 1 itl falls almost fourfold; at acceptance 0 every
    pass yields one token and costs a little more than plain decoding."""
    engine = bundled.model_engine
    plain = evaluate_request(
        engine, "llama-3-8b", DEVICE, "bf16", Deployment(), 1, RequestShape(1024, 256)
    )
    every = evaluate_request(
        engine,
        "llama-3-8b",
        DEVICE,
        "bf16",
        Deployment(),
        1,
        RequestShape(1024, 256, Speculation(3, Fraction(1))),
    )
    none = evaluate_request(
        engine,
        "llama-3-8b",
        DEVICE,
        "bf16",
        Deployment(),
        1,
        RequestShape(1024, 256, Speculation(3, Fraction(0))),
    )
    assert plain.itl is not None and every.itl is not None and none.itl is not None
    assert plain.ttft == every.ttft == none.ttft  # the prefill is the same pass
    assert plain.itl < none.itl < plain.itl * Fraction(101, 100)
    assert plain.itl / 4 < every.itl < plain.itl / Fraction(39, 10)


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--specs", str(BUNDLED)], out)
    return code, out.getvalue()


def _request(command: str, speculate: str, fmt: str) -> tuple[int, str]:
    """`command` for Llama 3 8B on the H100, a request of 1,024/256 tokens."""
    return _run(
        command, "--model", "llama-3-8b", "--device", DEVICE, "--input", "1024",
        "--output", "256", "--speculate", speculate, "--format", fmt,
    )  # fmt: skip


def test_compile_writes_the_speculation_in_the_row() -> None:
    code, text = _request("compile", "k=3,acceptance=7/10", "jsonl")
    assert 0 == code
    row = json.loads(text)
    assert (3, 0.7, float(Fraction(7599, 3000))) == (
        row["draft_tokens"],
        row["acceptance"],
        row["tokens_per_pass"],
    )


def test_plan_says_how_the_requests_are_decoded_and_how_to_derive_them() -> None:
    code, text = _request("plan", "k=3,acceptance=0.7", "json")
    assert 0 == code
    answer = json.loads(text)
    assert {"k": 3, "acceptance": 0.7, "tokens_per_pass": float(Fraction(7599, 3000))} == (
        answer["speculation"]
    )
    [plan] = answer["plans"]
    assert plan["explain"].endswith("--speculate k=3,acceptance=0.7 --specs " + str(BUNDLED))
    # The command it names derives the same itl.
    argv = plan["explain"].split()[1:-2]
    code, derived = _run(*argv)
    assert 0 == code
    assert "Decode by speculation: k = 3 drafted tokens" in derived


@pytest.mark.parametrize(
    "text",
    [
        "k=3",
        "k=0,acceptance=0.5",
        "k=65,acceptance=0.5",
        "k=3,acceptance=1.01",
        "k=3,acceptance=x",
        "k=3,acceptance=0.5,k=2",
        "k=3;acceptance=0.5",
        "k=3,acceptance=1/0",
    ],
)
def test_a_bad_speculate_is_one_line_exit_2(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run(
        "plan", "--model", "llama-3-8b", "--input", "8", "--output", "8", "--speculate", text
    )
    err = capsys.readouterr().err
    assert 2 == code
    assert 1 == len(err.strip().splitlines())
    assert "--speculate" in err


def test_a_phase_that_is_a_verify_pass_yields_its_expected_tokens(tmp_path: Path) -> None:
    """A phase with `speculation:` runs s = k + 1 tokens of b sequences and yields b ×
    (1 − α^(k+1))/(1 − α) tokens: 8 × 2.533 = 20.264 at k = 3, α = 0.7, exactly, and
    its tokens per second are those over the pass's time."""
    specs = copy_bundled(tmp_path)
    path = specs / "models" / "llama-3-8b.yaml"
    text = path.read_text("utf-8")
    changed = text.replace(
        "phases:\n",
        "phases:\n  verify-b8: {b: 8, s: 4, L: 2051, speculation: {k: 3, acceptance: 0.7}}\n",
        1,
    )
    assert changed != text
    path.write_text(changed, "utf-8")
    compiled = compile_catalog(catalog_or_raise(specs))
    model = compiled.catalog.models["llama-3-8b"]
    assert {"verify-b8": Speculation(3, Fraction(7, 10))} == model.speculation
    assert 8 * Fraction(7599, 3000) == model.tokens_by_phase["verify-b8"]
    row = compiled.model_engine.row("llama-3-8b", "verify-b8", DEVICE, "bf16")
    assert 8 * Fraction(7599, 3000) == row.tokens
    assert row.tokens / row.time == row.tokens_per_second
