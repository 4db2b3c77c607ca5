"""`rooflinec plan` on the bundled catalog: the JSON shape DESIGN v3 gives, the reader's
price labelled as the reader's, the text's plain answer when no deployment meets the
targets, CSV, and each plan row derived again by the `explain` command it prints (and
its figures equal to `compile`'s request row for the same deployment)."""

from __future__ import annotations

import csv
import io
import json
import shlex
from functools import cache

import pytest

from rooflinec.cli.main import main

DEVICES = ("--device", "nvidia-h100-sxm", "--device", "amd-mi300x")
REQUEST = ("--input", "1024", "--output", "256")


@cache
def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def plan_json(*extra: str) -> dict[str, object]:
    code, text = run(
        "plan", "--model", "llama-3-8b", *REQUEST, *DEVICES, *extra, "--format", "json"
    )
    assert 0 == code
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


def test_json_has_the_design_shape() -> None:
    """The top-level keys and each plan's and frontier point's keys are DESIGN v3's (and a
    few more: the price's source, tokens/s per kW, a note, the explain command)."""
    data = plan_json("--min-user-rate", "20", "--max-ttft", "500ms")
    assert {"model", "input", "output", "targets", "plans", "frontier"} <= data.keys()
    assert ("llama-3-8b", 1024, 256) == (data["model"], data["input"], data["output"])
    targets = data["targets"]
    assert {"min_user_rate": 20, "max_ttft": 0.5, "max_latency": None, "max_chips": None} == (
        targets
    )
    plans = data["plans"]
    assert isinstance(plans, list)
    assert ["nvidia-h100-sxm", "amd-mi300x"] == [p["device"] for p in plans]
    design = {
        *("device", "chips", "tp", "pp", "ep", "batch", "fits", "ttft", "itl", "latency"),
        *("tokens_per_second_per_user", "tokens_per_second", "tokens_per_second_per_chip"),
        *("usd_per_million_tokens", "joules_per_token", "meets", "binding"),
    }
    for p in plans:
        assert design <= p.keys()
        assert p["meets"] is True and p["fits"] is True
        assert p["tokens_per_second_per_user"] >= 20 and p["ttft"] <= 0.5
    frontier = data["frontier"]
    assert isinstance(frontier, list) and frontier
    point_keys = {"device", "chips", "tp", "pp", "ep", "batch"}
    point_keys |= {"tokens_per_second_per_user", "tokens_per_second_per_chip"}
    assert all(point_keys == p.keys() for p in frontier)


def test_readers_price_is_labelled_the_readers() -> None:
    """`--price D=2.5USD/h` prices D's plan, its source "reader", and the text says
    "reader's price"; the other device has no price."""
    data = plan_json("--price", "nvidia-h100-sxm=2.5USD/h", "--objective", "cost")
    assert {"nvidia-h100-sxm": 2.5} == data["prices"]
    h100, mi300x = data["plans"]  # type: ignore[misc]
    assert "reader" == h100["price_source"] and h100["usd_per_million_tokens"] > 0
    assert h100["meets"] is True
    assert mi300x["usd_per_million_tokens"] is None and mi300x["meets"] is False
    _, text = run(
        "plan", "--model", "llama-3-8b", *REQUEST, *DEVICES,
        "--price", "nvidia-h100-sxm=2.5 USD/h", "--objective", "cost",
    )  # fmt: skip
    assert "reader's price for nvidia-h100-sxm: 2.5 USD/h per chip" in text
    assert "at the reader's price of 2.5 USD/h per chip" in text
    assert "amd-mi300x: no plan: no price: give one with --price" in text


def test_text_says_plainly_when_none_meets_and_which_target_binds() -> None:
    """No deployment reaches a million tokens/s per user: each device says so, and names
    --min-user-rate as the binding target."""
    code, text = run(
        "plan", "--model", "llama-3-8b", *REQUEST, *DEVICES, "--min-user-rate", "1000000"
    )
    assert 0 == code
    assert "nvidia-h100-sxm: no deployment meets the targets" in text
    assert "  binding: --min-user-rate (tokens/s per user)" in text
    assert "0 of 2 devices meet the targets" in text
    data = plan_json("--min-user-rate", "1000000")
    assert [(False, "min-user-rate")] * 2 == [(p["meets"], p["binding"]) for p in data["plans"]]


def test_csv_has_the_plans_then_the_frontier() -> None:
    """One CSV row per plan, then one per frontier point, the column `row` saying which."""
    code, text = run("plan", "--model", "llama-3-8b", *REQUEST, *DEVICES, "--format", "csv")
    assert 0 == code
    rows = list(csv.DictReader(io.StringIO(text)))
    data = plan_json()
    assert ["plan", "plan"] == [r["row"] for r in rows[:2]]
    assert len(data["frontier"]) == sum(r["row"] == "frontier" for r in rows)  # type: ignore[arg-type]


@pytest.mark.parametrize("index", [0, 1])
def test_explain_derives_each_plan_row(index: int) -> None:
    """The row's `explain` command runs, and `compile` with the same deployment, batch and
    request gives the same figures as the plan row."""
    plan = plan_json("--min-user-rate", "20")["plans"][index]  # type: ignore[index]
    argv = shlex.split(plan["explain"])
    assert "rooflinec" == argv[0] and "explain" == argv[1]
    code, derivation = run(*argv[1:])
    assert 0 == code
    assert f"b × output / latency × dp = {plan['batch']} ×" in derivation
    code, compiled = run("compile", *argv[2:], "--format", "json")
    assert 0 == code
    (row,) = json.loads(compiled)["requests"]
    for key in ("ttft", "itl", "latency", "tokens_per_second_per_chip", "joules_per_token"):
        assert plan[key] == row[key], key


def test_request_names_a_shape_of_the_model() -> None:
    """`--request chat-1k` is the model's named shape: 1,024 input and 1,024 output."""
    code, text = run(
        "plan", "--model", "llama-3-8b", "--request", "chat-1k", "--device", "amd-mi300x",
        "--format", "json",
    )  # fmt: skip
    assert 0 == code
    data = json.loads(text)
    assert (1024, 1024) == (data["input"], data["output"])
