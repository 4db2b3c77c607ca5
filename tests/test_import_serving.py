"""`rooflinec import serving`: a vLLM benchmark_serving result, genai-perf's
profile_export_genai_perf.csv and the plain serving CSV read into a model's serving
results, each figure with the file's own decimal text; printed as YAML, or added to the
model's spec in place (built first, all or nothing); hostile files refused at their line.

The refused files themselves are `tests/cases/imports/serving/` (run by
`tests/test_import_hostile.py`); the valid ones are `tests/fixtures/imports/serving/`.
"""

from __future__ import annotations

import datetime
import io
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Deployment
from rooflinec.cli.main import main, parse
from rooflinec.importing.rows import ExportError
from rooflinec.importing.serving import (
    SERVING_FORMATS,
    ServingDefaults,
    detect_format,
    read_serving,
    render_serving,
)
from tests.specfactory import copy_bundled

FIXTURES = Path(__file__).parent / "fixtures" / "imports" / "serving"
VLLM = FIXTURES / "vllm-concurrency4.json"
GENAI = FIXTURES / "profile_export_genai_perf.csv"
PLAIN = FIXTURES / "serving.csv"
MODEL = "llama-3-70b"
RUN = ("--model", MODEL, "--device", "nvidia-h100-sxm", "--tp", "2", "--precision", "fp8")
TODAY = datetime.date(2026, 12, 1)
# A line of stderr: `FILE:LINE[:COL]: error: ` or `rooflinec: error: `, then a message.
LOCATED = re.compile(r"^(?:.+?:\d+(?::\d+)?|rooflinec): error: \S")


@pytest.fixture(autouse=True)
def today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rooflinec.lints.current_date", lambda: TODAY)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundled catalog that the printing tests read (and never change)."""
    return copy_bundled(tmp_path_factory.mktemp("bundled"))


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def printed(specs: Path, *args: str) -> dict[str, Any]:
    """The YAML `import serving ARGS` prints, parsed back."""
    code, out = run("import", "serving", *args, "--specs", str(specs))
    assert 0 == code
    data: dict[str, Any] = YAML(typ="safe").load(out)
    return data


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def without_note(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if k != "note"}


def read(path: Path, **flags: Any) -> list[dict[str, Any]]:
    """`read_serving` of a file, the run's flags given."""
    return read_serving(str(path), path.read_bytes(), None, ServingDefaults(model=MODEL, **flags))


def source_fields(tool: str, name: str) -> dict[str, Any]:
    """A new measurement source's fields, but its note (which names the file's path)."""
    return {
        "title": f"{tool} results {name}",
        "publisher": "local measurement",
        "read": TODAY,
        "kind": "measurement",
        "tool": tool,
    }


# -- the three formats ------------------------------------------------------------------


def test_vllm_result_is_one_serving_result(bundled: Path) -> None:
    """benchmark_serving's figures with their decimal text, max_concurrency, the engine
    from `vllm_version`, the quote the file's own members, and a new measurement source."""
    data = printed(bundled, str(VLLM), *RUN, "--input", "5000", "--output", "500")
    quote = (
        '"output_throughput": 168.83839731955803, "mean_ttft_ms": 612.3498312160373,'
        ' "mean_itl_ms": 22.43990541328167'
    )
    expected = [
        {
            "device": "nvidia-h100-sxm",
            "tp": 2,
            "precision": "fp8",
            "input": 5000,
            "output": 500,
            "concurrency": 4,
            "engine": "vLLM 0.6.3",
            "ttft": "612.3498312160373 ms",
            "itl": "22.43990541328167 ms",
            "output_rate": "168.83839731955803 tokens/s",
            "source": "vllm-vllm-concurrency4",
            "quote": quote,
            "note": "benchmark of meta-llama/Llama-3.3-70B-Instruct",
        }
    ]
    assert expected == data["measured"]
    assert all(member in VLLM.read_text("utf-8") for member in quote.split(", "))
    fields = data["sources"]["vllm-vllm-concurrency4"]
    assert source_fields("vLLM benchmark_serving", VLLM.name) == without_note(fields)
    assert "vllm-concurrency4.json on 2026-12-01" in fields["note"]


def test_genai_perf_csv_is_one_serving_result(bundled: Path) -> None:
    """The avg of TTFT and ITL, the Value of the output throughput (thousands separators
    read, the digits kept), the lengths from rows whose min is their max."""
    args = (str(GENAI), *RUN, "--concurrency", "8", "--engine", "vLLM 0.6.3")
    data = printed(bundled, *args)
    lines = GENAI.read_text("utf-8").splitlines()
    expected = [
        {
            "device": "nvidia-h100-sxm",
            "tp": 2,
            "precision": "fp8",
            "input": 5000,
            "output": 500,
            "concurrency": 8,
            "engine": "vLLM 0.6.3",
            "ttft": "1084.56 ms",
            "itl": "24.61 ms",
            "output_rate": "299.31 tokens/s",
            "source": "genai-perf-profile-export-genai-perf",
            "quote": "; ".join([lines[1], lines[2], lines[8]]),
        }
    ]
    assert expected == data["measured"]
    fields = data["sources"]["genai-perf-profile-export-genai-perf"]
    assert source_fields("genai-perf", GENAI.name) == without_note(fields)


def test_plain_csv_is_one_serving_result_a_line(bundled: Path) -> None:
    """Each line an entry, in the schema's field order; the quote is the line; markup in
    a note is kept as written (the site escapes it)."""
    data = printed(bundled, str(PLAIN), "--model", MODEL)
    lines = PLAIN.read_text("utf-8").splitlines()
    common = {"device": "nvidia-h100-sxm", "tp": 2, "precision": "fp8"}
    request = {"input": 5000, "output": 500}
    note = "energy from nvidia-smi's power.draw over the run, <b>both</b> GPUs & the host excluded"
    expected = [
        {**common, "kv": "fp8", **request, "concurrency": 1, "engine": "vLLM 0.6.3",
         "ttft": "398.4 ms", "itl": "18.91 ms", "output_rate": "52.12 tokens/s",
         "source": "csv-serving", "quote": lines[1], "note": "one request at a time"},
        {**common, "kv": "fp8", **request, "concurrency": 16, "engine": "vLLM 0.6.3",
         "ttft": "1534.2 ms", "itl": "31.07 ms", "output_rate": "487.93 tokens/s",
         "energy": "1.32 J/token", "assumed": ["kv"], "source": "csv-serving",
         "quote": lines[2], "note": note},
        {**common, **request, "concurrency": 64, "engine": "vLLM 0.6.3", "ttft": "5210.77 ms",
         "itl": "52.4 ms", "output_rate": "1016.5 tokens/s", "source": "csv-serving",
         "quote": lines[3]},
    ]  # fmt: skip
    assert expected == data["measured"]
    assert ["csv-serving"] == list(data["sources"])


def test_entries_print_as_one_flow_mapping_a_line(bundled: Path) -> None:
    """`measured:`, then each entry on one line, as a model's spec writes them."""
    _, out = run("import", "serving", str(PLAIN), "--model", MODEL, "--specs", str(bundled))
    lines = out.splitlines()
    assert "measured:" == lines[0]
    assert 3 == sum(1 for ln in lines if ln.startswith("  - {device: nvidia-h100-sxm, tp: 2,"))
    assert "sources:" == lines[4]


def test_source_of_the_spec_is_cited_not_added(bundled: Path) -> None:
    """`--source ID` naming a source the model's spec has: the entries cite it, and no
    source is printed."""
    data = printed(bundled, str(PLAIN), "--model", MODEL, "--source", "nim-llama-3-3-70b")
    assert ["nim-llama-3-3-70b"] * 3 == [e["source"] for e in data["measured"]]
    assert "sources" not in data


# -- what vLLM's file says and what the flags say ----------------------------------------

BASE = {
    "backend": "vllm",
    "model_id": "meta-llama/Llama-3.3-70B-Instruct",
    "request_rate": "inf",
    "max_concurrency": 2,
    "completed": 3,
    "failed": 1,
    "output_throughput": 61.5,
    "mean_ttft_ms": 401.25,
    "mean_tpot_ms": 19.75,
}


def vllm_file(tmp_path: Path, text: str, name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def members(**changes: Any) -> str:
    """A vLLM result's JSON, as json.dump writes it."""
    import json

    return json.dumps({**BASE, **changes})


def test_lengths_of_a_detailed_result_need_no_flags(tmp_path: Path) -> None:
    """`--save-detailed` lists each request's lengths: all the same (the failed request's
    output 0 left out) they are the entry's; ITL falls back to TPOT; no engine version,
    vLLM; the failure noted."""
    path = vllm_file(
        tmp_path,
        members(input_lens=[5000, 5000, 5000, 5000], output_lens=[500, 0, 500, 500],
                total_input_tokens=15000, total_output_tokens=1500),
    )  # fmt: skip
    (entry,) = read(path, device="nvidia-h100-sxm", precision="fp8")
    expected = {
        "device": "nvidia-h100-sxm",
        "precision": "fp8",
        "input": 5000,
        "output": 500,
        "concurrency": 2,
        "engine": "vLLM",
        "ttft": "401.25 ms",
        "itl": "19.75 ms",
        "output_rate": "61.5 tokens/s",
        "source": "vllm-run",
        "quote": '"output_throughput": 61.5, "mean_ttft_ms": 401.25, "mean_tpot_ms": 19.75',
        "note": "benchmark of meta-llama/Llama-3.3-70B-Instruct; 1 request(s) failed",
    }
    assert expected == entry


def test_lengths_that_vary_take_the_flag_marked_assumed(tmp_path: Path) -> None:
    """Lengths that differ from request to request: `--input N` gives the entry's, which
    is then marked assumed, with the range in the note."""
    path = vllm_file(tmp_path, members(input_lens=[4800, 5000, 5200], output_lens=[500, 500, 500]))
    (entry,) = read(path, device="nvidia-h100-sxm", precision="fp8", input=5000)
    assert (5000, 500, ["input"]) == (entry["input"], entry["output"], entry["assumed"])
    assert "input tokens vary from 4800 to 5200, mean 5000; --input 5000 given" in entry["note"]


def test_lengths_a_result_does_not_list_take_the_flags(tmp_path: Path) -> None:
    """Without the lists, the flags give the lengths; a mean that is the flag's is no
    assumption, one that differs is."""
    path = vllm_file(tmp_path, members(total_input_tokens=15000, total_output_tokens=1400))
    (entry,) = read(path, device="nvidia-h100-sxm", precision="fp8", input=5000, output=500)
    assert (5000, 500, ["output"]) == (entry["input"], entry["output"], entry["assumed"])


def test_flag_saying_otherwise_than_the_file_is_refused(tmp_path: Path) -> None:
    """The file's concurrency 2 against `--concurrency 4`: a problem at the value."""
    text = members(input_lens=[10, 10, 10], output_lens=[5, 5, 5])
    path = vllm_file(tmp_path, text)
    with pytest.raises(ExportError) as info:
        read(path, device="d", precision="p", concurrency=4)
    (problem,) = info.value.problems
    col = text.index('2, "completed"') + 1
    expected = (
        f'{path}:1:{col}: error: "max_concurrency" is 2, but --concurrency says 4: they'
        " disagree (leave the flag out, or import the file that was run with it)"
    )
    assert expected == str(problem)


def test_append_result_lines_are_one_entry_each(tmp_path: Path) -> None:
    """`--append-result` writes one result a line: a concurrency sweep in one file."""
    sweep = "\n".join(members(max_concurrency=c, input_lens=[9] * 3, output_lens=[7] * 3)
                      for c in (1, 8, 64))  # fmt: skip
    path = vllm_file(tmp_path, sweep + "\n")
    entries = read(path, device="nvidia-h100-sxm", precision="fp8")
    assert [1, 8, 64] == [e["concurrency"] for e in entries]


def test_pretty_printed_result_quotes_each_member_on_one_line(tmp_path: Path) -> None:
    """A result someone re-indented (`json.dumps(indent=2)`, CRLF, a break after a
    colon) reads the same; its quote has no line break."""
    import json

    data = json.loads(members(input_lens=[9] * 3, output_lens=[7] * 3))
    text = json.dumps(data, indent=2).replace('"mean_ttft_ms": ', '"mean_ttft_ms":\n    ')
    path = vllm_file(tmp_path, text.replace("\n", "\r\n"))
    (entry,) = read(path, device="d", precision="p")
    expected = '"output_throughput": 61.5, "mean_ttft_ms": 401.25, "mean_tpot_ms": 19.75'
    assert (expected, "401.25 ms") == (entry["quote"], entry["ttft"])


def test_finite_request_rate_and_other_backends_are_said(tmp_path: Path) -> None:
    """A request rate that is not inf is noted (requests were not all sent at once), and
    a backend of another engine names it."""
    path = vllm_file(
        tmp_path,
        members(backend="sglang", request_rate=2.5, max_concurrency=None,
                input_lens=[9] * 3, output_lens=[7] * 3),
    )  # fmt: skip
    (entry,) = read(path, device="nvidia-h100-sxm", precision="fp8")
    assert ("SGLang", False) == (entry["engine"], "concurrency" in entry)
    assert "requests sent at 2.5 a second (request_rate)" in entry["note"]


# -- numbers, text and YAML -----------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("406.770", "406.770 ms"),
        ("4.0677e2", "406.77 ms"),
        ('"1,234.5"', "1234.5 ms"),
        ("0.000125", "0.000125 ms"),
        ("12", "12 ms"),
    ],
)
def test_figures_keep_their_decimal_text(tmp_path: Path, cell: str, expected: str) -> None:
    """A plain decimal is written as the file has it; a separator or an exponent is
    written out exactly, never through a float."""
    path = tmp_path / "one.csv"
    path.write_text(
        f"device,precision,input,output,engine,ttft_ms\nnvidia-h100-sxm,fp8,100,10,vLLM,{cell}\n",
        "utf-8",
    )
    (entry,) = read(path)
    assert expected == entry["ttft"]


def test_json_floats_keep_their_text(tmp_path: Path) -> None:
    """A float that binary floating point does not hold (0.1 + 0.2's neighbour) keeps
    every digit the file wrote."""
    path = vllm_file(tmp_path, members(mean_ttft_ms=0.30000000000000004,
                                       input_lens=[9] * 3, output_lens=[7] * 3))  # fmt: skip
    (entry,) = read(path, device="d", precision="p")
    assert "0.30000000000000004 ms" == entry["ttft"]


def test_genai_perf_variants_read_the_same(tmp_path: Path) -> None:
    """genai-perf's metric names across versions: lengths with or without `(tokens)`,
    the throughput `(tokens/sec)` or `(per sec)`, and the per-user rate's row."""
    path = tmp_path / "profile_export_genai_perf.csv"
    path.write_text(
        "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"
        "Time To First Token (ms),45.10,40.00,50.00,50.00,50.00,50.00,50.00,45.00,42.00\n"
        "Output Token Throughput Per User (tokens/sec/user),98.25,90.00,105.00,105.00,"
        "104.00,103.00,100.00,98.00,95.00\n"
        "Output Sequence Length (tokens),128.00,128.00,128.00,128.00,128.00,128.00,128.00,"
        "128.00,128.00\n"
        "Input Sequence Length (tokens),512.00,512.00,512.00,512.00,512.00,512.00,512.00,"
        "512.00,512.00\n"
        "\n"
        "Metric,Value\n"
        "Output Token Throughput (tokens/sec),95.40\n"
        "Request Throughput (per sec),0.75\n",
        "utf-8",
    )
    (entry,) = read(path, device="d", precision="p", concurrency=1, engine="NIM")
    expected = (512, 128, "45.10 ms", "98.25 tokens/s", "95.40 tokens/s")
    assert expected == (entry["input"], entry["output"], entry["ttft"], entry["user_rate"],
                        entry["output_rate"])  # fmt: skip


HOSTILE_TEXT = [
    'engine "quoted", with: colons # and a hash',
    "{braces} [brackets] & <script>alert(1)</script>",
    "- a dash first, 'single' quotes",
    "  spaces around  ",
    "ünïcödé → 1 µs ≥ 2",
    "yes",
    "1.5",
    "null",
    "@at `tick` %percent !bang *star |pipe >gt",
]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_rendered_yaml_reads_back_as_the_entries(text: str) -> None:
    """Whatever the text (YAML's indicators, markup, words YAML reads as other types),
    the printed YAML reads back as the entries, verbatim."""
    entry = {
        "device": "nvidia-h100-sxm",
        "precision": "fp8",
        "input": 100,
        "output": 10,
        "engine": text,
        "ttft": "12.5 ms",
        "speculation": {"k": 4},
        "technique": text,
        "assumed": ["kv", "input"],
        "source": "x",
        "quote": text,
        "note": text,
    }
    data = YAML(typ="safe").load(render_serving([entry], ("x", {"title": text})))
    assert {"measured": [entry], "sources": {"x": {"title": text}}} == data


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("run.json", b"", "vllm"),
        ("run.txt", b'\xef\xbb\xbf  {"completed": 1}', "vllm"),
        ("run.txt", b"[1]", "vllm"),
        ("p.csv", b'"Metric","avg"\r\nTime To First Token (ms),1\r\n', "genai-perf"),
        ("p.csv", b"device,precision\n", "csv"),
        ("p.csv", b"", "csv"),
    ],
)
def test_format_is_told_from_the_file(name: str, data: bytes, expected: str) -> None:
    """A .json file or one starting with { or [ is vLLM's; a first cell `Metric`,
    genai-perf's; anything else the plain CSV."""
    assert expected == detect_format(name, data, None)
    assert "csv" == detect_format(name, data, "csv")


def test_unknown_format_is_a_located_error() -> None:
    """An API caller's format that is none of them: one line at the file's line 1."""
    with pytest.raises(ExportError) as info:
        read_serving("r.xml", b"<xml/>", "xml", ServingDefaults(model=MODEL))
    expected = "r.xml:1: error: unknown format 'xml': import serving reads vllm, genai-perf, csv"
    assert [expected] == [str(p) for p in info.value.problems]
    assert ("vllm", "genai-perf", "csv") == SERVING_FORMATS


# -- --write ----------------------------------------------------------------------------


def test_write_adds_results_the_catalog_builds_with(tmp_path: Path) -> None:
    """`--write` adds the entry and its source to the model's spec in place; the catalog
    builds and the model has the new serving result; importing it again changes nothing."""
    specs = copy_bundled(tmp_path)
    spec = specs / "models" / f"{MODEL}.yaml"
    before = len(catalog_or_raise(specs).models[MODEL].serving)
    args = ("import", "serving", str(VLLM), *RUN, "--input", "5000", "--output", "500",
            "--specs", str(specs), "--write")  # fmt: skip
    code, out = run(*args)
    assert (0, f"{spec}: serving results added (source vllm-vllm-concurrency4)\n") == (code, out)
    model = catalog_or_raise(specs).models[MODEL]
    added = [r for r in model.serving if r.source == "vllm-vllm-concurrency4"]
    expected = [
        (
            "nvidia-h100-sxm",
            Deployment(2),
            "fp8",
            5000,
            500,
            4,
            "vLLM 0.6.3",
            {"ttft": "612.3498312160373 ms", "itl": "22.43990541328167 ms",
             "output_rate": "168.83839731955803 tokens/s"},
        )
    ]  # fmt: skip
    actual = [
        (r.device, r.deployment, r.precision, r.input, r.output, r.concurrency, r.engine, r.texts)
        for r in added
    ]
    assert expected == actual
    assert before + 1 == len(model.serving)
    assert "vllm-vllm-concurrency4" in model.sources
    written = spec.read_bytes()
    assert (0, written) == (run(*args)[0], spec.read_bytes())


def test_write_makes_the_measured_list_before_the_sources(tmp_path: Path) -> None:
    """A model spec with no `measured` list gets one, before `sources:`, and builds."""
    specs = copy_bundled(tmp_path)
    export = tmp_path / "mixtral.csv"
    export.write_text(
        "device,precision,input,output,concurrency,engine,ttft_ms,itl_ms\n"
        "nvidia-h100-sxm,bf16,1024,256,1,vLLM 0.6.3,900,40\n",
        "utf-8",
    )
    spec = specs / "models" / "mixtral-8x7b.yaml"
    assert "\nmeasured:" not in spec.read_text("utf-8")
    code, _ = run("import", "serving", str(export), "--model", "mixtral-8x7b",
                  "--specs", str(specs), "--write")  # fmt: skip
    assert 0 == code
    text = spec.read_text("utf-8")
    assert text.index("\n\nmeasured:\n  - {device: nvidia-h100-sxm, precision: bf16,") < text.index(
        "\n\nsources:\n"
    )
    model = catalog_or_raise(specs).models["mixtral-8x7b"]
    assert [("900 ms", "40 ms")] == [(r.texts["ttft"], r.texts["itl"]) for r in model.serving]


def test_write_refuses_a_different_source_of_the_same_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """day2/run.json after day1/run.json: the source `vllm-run` is there and differs
    (its note names the other file), refused at its line; `--source` records day 2."""
    specs = copy_bundled(tmp_path)
    flags = (*RUN, "--input", "9", "--output", "7", "--specs", str(specs), "--write")
    for day in ("day1", "day2"):
        (tmp_path / day).mkdir()
    day1 = vllm_file(tmp_path / "day1", members(max_concurrency=1), "run.json")
    day2 = vllm_file(tmp_path / "day2", members(max_concurrency=8), "run.json")
    assert 0 == run("import", "serving", str(day1), *flags)[0]
    before = snapshot(specs)
    capsys.readouterr()
    assert (1, "") == run("import", "serving", str(day2), *flags)
    (line,) = capsys.readouterr().err.splitlines()
    assert re.match(rf"{re.escape(str(specs / 'models' / MODEL))}\.yaml:\d+:3: error: source"
                    " 'vllm-run' is already there", line)  # fmt: skip
    assert before == snapshot(specs)
    assert 0 == run("import", "serving", str(day2), *flags, "--source", "day2-run")[0]
    model = catalog_or_raise(specs).models[MODEL]
    assert [("vllm-run", 1), ("day2-run", 8)] == [
        (r.source, r.concurrency) for r in model.serving if r.source in ("vllm-run", "day2-run")
    ]


def test_write_of_a_result_that_beats_its_bound_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The edited spec is built before it replaces the file: an ITL of 0.5 ms, twenty
    times better than the bound, is the build's error at the new entry, and no file
    changes."""
    specs = copy_bundled(tmp_path)
    export = tmp_path / "fast.csv"
    export.write_text(
        "device,tp,precision,input,output,concurrency,engine,itl_ms\n"
        "nvidia-h100-sxm,2,fp8,5000,500,1,vLLM 0.6.3,0.5\n",
        "utf-8",
    )
    before = snapshot(specs)
    code, out = run("import", "serving", str(export), "--model", MODEL, "--specs", str(specs),
                    "--write")  # fmt: skip
    (line,) = capsys.readouterr().err.splitlines()
    assert (1, "") == (code, out)
    spec = re.escape(str(specs / "models" / MODEL))
    expected = (
        rf"{spec}\.yaml:\d+:5: error: measured itl of model 'llama-3-70b' .* is 0.5 ms, better"
    )
    assert re.match(expected + " than its bound", line), line
    assert before == snapshot(specs)


# -- hostile command lines and files ------------------------------------------------------


# What the vLLM fixture needs besides: each case's own flags, given after, win.
FLAGS = (*RUN, "--input", "5000", "--output", "500")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((*FLAGS, "--tp", "0"), "--tp '0' is not a degree"),
        ((*FLAGS, "--concurrency", "x"), "--concurrency 'x' is not a concurrency"),
        ((*FLAGS, "--concurrency", "2", "--batch", "3"), "--concurrency and --batch"),
        ((*FLAGS, "--input", "1e3"), "--input '1e3' is not a token count"),
        ((*FLAGS, "--engine", "vLLM\x1b[2J"), "holds a control character (U+001B)"),
        ((*FLAGS, "--model", "nope"), "unknown model 'nope'"),
        ((*FLAGS, "--device", "nope"), "unknown device 'nope'"),
        ((*FLAGS, "--kv", "fp9"), "unknown precision 'fp9'"),
        (("--device", "nvidia-h100-sxm"), "import serving needs --model M"),
        ((*FLAGS, "--match", "a=b"), "--match, --id and --url are not flags"),
    ],
)
def test_bad_flags_are_one_usage_line(
    bundled: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], fragment: str
) -> None:
    """Exit 2, one `rooflinec: error:` line naming the flag; nothing printed."""
    code, out = run("import", "serving", str(VLLM), *args, "--specs", str(bundled))
    (line,) = capsys.readouterr().err.splitlines()
    assert (2, "") == (code, out)
    assert line.startswith("rooflinec: error: ") and fragment in line, line


@pytest.mark.parametrize("kind", ["csv", "hf-config"])
def test_serving_flags_belong_to_import_serving(
    bundled: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """`--model` on another import is a usage error, not silently ignored."""
    code, _ = run("import", kind, str(PLAIN), "--model", MODEL, "--specs", str(bundled))
    assert 2 == code
    assert "rooflinec: error: --model is a flag of `import serving`\n" == capsys.readouterr().err


def test_file_over_the_cap_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 17 MB file: one line at line 1, exit 1, before any spec is read."""
    big = tmp_path / "big.json"
    big.write_bytes(b'{"completed": 1, "pad": "' + b"x" * (17 << 20) + b'"}')
    code, _ = run("import", "serving", str(big), *RUN, "--specs", str(tmp_path / "none"))
    (line,) = capsys.readouterr().err.splitlines()
    assert 1 == code
    assert line.startswith(f"{big}:1: error: the file is larger than 16 MiB")


def test_import_serving_options_are_typed_fields() -> None:
    """`import serving`'s flags land in `Options` fields, as typed."""
    opts = parse(
        ["import", "serving", "r.json", "--model", "m", "--format", "vllm", "--device", "d",
         "--tp", "2", "--kv", "fp8", "--concurrency", "4", "--engine", "vLLM 0.6.3"]
    )  # fmt: skip
    actual = (opts.kind, opts.models, opts.serving_format, opts.devices, opts.tp, opts.kv,
              opts.concurrency, opts.engine)  # fmt: skip
    assert ("serving", ("m",), "vllm", ("d",), "2", "fp8", "4", "vLLM 0.6.3") == actual


def _mutations() -> st.SearchStrategy[tuple[str, bytes]]:
    """(fixture name, its bytes cut, a byte range replaced by hostile text, or a line
    doubled)."""
    hostile = st.sampled_from(
        [b"", b"NaN", b"-1", b"1e99999", b"\x00", b"\xff", b'"', b",", b"{", b"]", b"\n",
         b"9" * 200, b"0", b"1,5", b"\xe2\x80\xae", "é".encode() * 40, b"[" * 3000]
    )  # fmt: skip

    @st.composite
    def mutate(draw: st.DrawFn) -> tuple[str, bytes]:
        path = draw(st.sampled_from([VLLM, GENAI, PLAIN]))
        data = path.read_bytes()
        how = draw(st.sampled_from(["cut", "replace", "double"]))
        if how == "cut":
            return path.name, data[: draw(st.integers(0, len(data)))]
        start = draw(st.integers(0, len(data)))
        if how == "double":
            return path.name, data[:start] + data[start:] + data[start:]
        end = draw(st.integers(start, min(len(data), start + 12)))
        return path.name, data[:start] + draw(hostile) + data[end:]

    return mutate()


@settings(
    derandomize=True,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(mutated=_mutations())
def test_mutated_files_give_entries_or_located_problems(mutated: tuple[str, bytes]) -> None:
    """Any damage to a valid file: entries, or `ExportError` whose every line is one
    located `FILE:LINE[:COL]: error:` line of bounded length; never another exception."""
    name, data = mutated
    defaults = ServingDefaults(
        model=MODEL, device="nvidia-h100-sxm", precision="fp8", input=5000, output=500,
        concurrency=8 if name == GENAI.name else None, engine="vLLM 0.6.3",
    )  # fmt: skip
    try:
        entries = read_serving(name, data, None, defaults)
    except ExportError as exc:
        for problem in exc.problems:
            line = str(problem)
            assert LOCATED.match(line) and "\n" not in line and len(line) < 600, line
        return
    assert entries
    for entry in entries:
        assert YAML(typ="safe").load(render_serving([entry], None)) == {"measured": [entry]}
