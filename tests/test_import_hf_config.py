"""`rooflinec import hf-config`: model specs from published Hugging Face config.json files.

The fixtures in `tests/fixtures/hf-config/` are vendors' published configs (their
provenance is in that folder's README). A config whose model is bundled imports to the
same figures as the bundled spec written by hand: every row of every phase both specs
name, on every bundled device, on one chip and on eight.
"""

from __future__ import annotations

import datetime
import io
import json
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from rooflinec.assemble import catalog_or_raise
from rooflinec.catalog import Deployment
from rooflinec.cli.main import main
from rooflinec.engine.compiler import compile_catalog
from rooflinec.resources import bundled_specs_dir

FIXTURES = Path(__file__).parent / "fixtures" / "hf-config"
CASES = Path(__file__).parent / "cases" / "imports" / "hf-config"
URL = "https://huggingface.co/org/name/blob/0123456789abcdef/config.json"
# Each bundled model with a published config.json, and that config.
BUNDLED = {
    "mixtral-8x7b": "mixtral-8x7b.json",
    "llama-2-7b": "llama-2-7b.json",
    "llama-3-1-405b": "llama-3.1-405b.json",
    "qwen3-235b-a22b": "qwen3-235b-a22b.json",
    "gpt-oss-120b": "gpt-oss-120b.json",
    "deepseek-v3": "deepseek-v3.json",
    "gemma-3-27b": "gemma-3-27b.json",
}


@pytest.fixture(autouse=True)
def today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rooflinec.lints.current_date", lambda: datetime.date(2026, 12, 3))


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def imported(config: str, ident: str) -> str:
    code, text = run("import", "hf-config", str(FIXTURES / config), "--id", ident, "--url", URL)
    assert 0 == code
    return text


def written(tmp_path: Path, config: dict[str, object], ident: str) -> Path:
    """A copy of the bundled catalog with `config` imported into it as `ident`
    (`import hf-config --write`): its specs folder."""
    path = tmp_path / f"{ident}.json"
    path.write_text(json.dumps(config, indent=2), "utf-8")
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    code, _ = run(
        "import", "hf-config", str(path), "--id", ident, "--url", URL,
        "--specs", str(specs), "--write",
    )  # fmt: skip
    assert 0 == code
    return specs


@pytest.fixture(scope="module")
def with_imports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled catalog and, beside each bundled model, its import as ID-imported."""
    specs = tmp_path_factory.mktemp("hf") / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rooflinec.lints.current_date", lambda: datetime.date(2026, 12, 3))
        for model, config in BUNDLED.items():
            text = imported(config, f"{model}-imported")
            (specs / "models" / f"{model}-imported.yaml").write_text(text, "utf-8")
    return specs


@pytest.mark.parametrize("model", sorted(BUNDLED))
def test_import_gives_the_bundled_figures(with_imports: Path, model: str) -> None:
    """Every row both specs have (their common phases, every device, the model's precision,
    on one chip and at tp = 8): the same operations, bytes, time and memory ledger."""
    compiled = compile_catalog(catalog_or_raise(with_imports))
    engine = compiled.model_engine
    hand, made = (compiled.catalog.models[m] for m in (model, f"{model}-imported"))
    assert hand.parameters == made.parameters
    common = sorted(set(hand.phases) & set(made.phases))
    assert len(common) >= 2
    compared = 0
    for deployment in (Deployment(), Deployment(tp=8)):
        for device in compiled.catalog.devices:
            for phase in common:
                try:
                    a = engine.row(model, phase, device, hand.precision, deployment)
                except Exception as exc:  # a deployment the device cannot take: both alike
                    with pytest.raises(type(exc)):
                        engine.row(made.id, phase, device, made.precision, deployment)
                    continue
                b = engine.row(made.id, phase, device, made.precision, deployment)
                assert (a.flops, a.bytes, a.time, a.time_by_limit) == (
                    b.flops,
                    b.bytes,
                    b.time,
                    b.time_by_limit,
                ), (device, phase, deployment)
                assert (a.fit is None) == (b.fit is None)
                if a.fit is not None and b.fit is not None:
                    assert a.fit.ledger == b.fit.ledger
                    assert (a.fit.fits, a.fit.max_batch, a.fit.needs_chips) == (
                        b.fit.fits,
                        b.fit.max_batch,
                        b.fit.needs_chips,
                    )
                compared += 1
    assert compared > 100


def test_parameters_quote_the_config() -> None:
    """Each parameter's comment quotes the config's member it was read from."""
    text = imported("mixtral-8x7b.json", "mixtral-imported")
    data = YAML(typ="rt").load(text)
    comments = {k: data["parameters"].ca.items[k][2].value.strip() for k in data["parameters"]}
    assert '# hf-config: "num_local_experts": 8' == comments["E"]
    assert '# hf-config: "num_key_value_heads": 8' == comments["hkv"]
    assert '# hf-config: "intermediate_size": 14336' == comments["f"]
    assert URL == data["sources"]["hf-config"]["url"]
    assert "bf16" == data["precision"]


def test_head_size_other_than_width_over_heads() -> None:
    """Qwen3-235B-A22B: 64 query heads of 128 over a width of 4096 (not 4096 / 64 = 64):
    the spec takes `d` from head_dim, and its experts' width from moe_intermediate_size."""
    data = YAML(typ="safe").load(imported("qwen3-235b-a22b.json", "qwen3-imported"))
    assert {
        "layers": 94,
        "h": 4096,
        "hq": 64,
        "hkv": 4,
        "d": 128,
        "f": 1536,
        "V": 151936,
        "E": 128,
        "k": 8,
    } == data["parameters"]
    steps = {s["id"]: s for s in data["steps"]}
    assert "hq*d/tp" == steps["q-proj"]["shape"]["N"]
    assert "d" == steps["attention"]["shape"]["d"]
    assert "2*layers/pp*max(hkv/tp, 1)*d*w" == data["memory"]["kv_per_token"]


def test_qwen3_imports_and_compiles(tmp_path: Path) -> None:
    """The imported Qwen3-235B-A22B compiles: 235 B parameters at BF16, 470 GB of weights."""
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    code, _ = run(
        "import", "hf-config", str(FIXTURES / "qwen3-235b-a22b.json"), "--id", "qwen3-235b",
        "--url", URL, "--specs", str(specs), "--write",
    )  # fmt: skip
    assert 0 == code
    compiled = compile_catalog(catalog_or_raise(specs))
    row = compiled.model_engine.row("qwen3-235b", "decode-b1-l2048", "nvidia-h100-sxm", "bf16")
    assert row.fit is not None
    # 94 layers x (attention 2*4096*8192 + 2*4096*512, experts 128*3*4096*1536, router
    # 4096*128, norms 2*4096) + 2 * 151936 * 4096 + 4096, at 2 B
    layer = 2 * 4096 * 8192 + 2 * 4096 * 512 + 128 * 3 * 4096 * 1536 + 4096 * 128 + 2 * 4096
    assert 2 * (94 * layer + 2 * 151936 * 4096 + 4096) == row.fit.ledger.weights
    assert row.fit.fits is False


def test_a_window_on_every_layer_bounds_the_cache(tmp_path: Path) -> None:
    """A Mistral config with `sliding_window` and no `layer_types` (every layer windowed,
    as Mistral 7B v0.1) imports with attention over the window and a KV ledger of
    min(L, W) keys: its cache stops growing at W, so every context fits where the
    weights do (max_context null, with its note)."""
    config = json.loads((CASES / "sliding-window.json").read_text("utf-8"))
    config["sliding_window"] = 4096
    path = tmp_path / "mistral.json"
    path.write_text(json.dumps(config), "utf-8")
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    code, _ = run(
        "import", "hf-config", str(path), "--id", "mistral-windowed",
        "--url", URL, "--specs", str(specs), "--write",
    )  # fmt: skip
    assert 0 == code
    compiled = compile_catalog(catalog_or_raise(specs))
    model = compiled.catalog.models["mistral-windowed"]
    assert {"W": 4096} == {k: v for k, v in model.parameters.items() if k == "W"}
    [attention] = [s for s in model.steps if s.kernel.startswith("attention")]
    assert "attention-kv-window" == attention.kernel
    engine = compiled.model_engine
    short = engine.row("mistral-windowed", "decode-b1-l2048", "nvidia-h100-sxm", "bf16")
    long = engine.row("mistral-windowed", "decode-b1-l8192", "nvidia-h100-sxm", "bf16")
    assert short.fit is not None and long.fit is not None
    # 32 layers x 2 x 8 heads x 128 x 2 B per key: 2,048 keys, then the window's 4,096
    assert 32 * 2 * 8 * 128 * 2 * 2048 == short.fit.ledger.kv_cache
    assert 32 * 2 * 8 * 128 * 2 * 4096 == long.fit.ledger.kv_cache
    assert long.fit.max_context is None and long.fit.max_context_note is not None


def test_architectures_not_imported_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line naming the architecture, exit 1."""
    config = json.loads((FIXTURES / "llama-2-7b.json").read_text("utf-8"))
    config["architectures"] = ["Qwen2MoeForCausalLM"]
    path = tmp_path / "qwen2-moe.json"
    path.write_text(json.dumps(config, indent=2), "utf-8")
    code, out = run("import", "hf-config", str(path), "--id", "x", "--url", URL)
    err = capsys.readouterr().err
    assert (1, "") == (code, out)
    assert 1 == len(err.splitlines())
    assert 'architecture "Qwen2MoeForCausalLM" is not imported yet' in err


def test_a_text_only_gemma3_takes_the_defaults(tmp_path: Path) -> None:
    """A Gemma3ForCausalLM config (the text model at the top level, no vision tower) with
    the same text sizes imports to the 27B's text figures: the same steps, and weights
    smaller by the vision tower's 423,060,336 parameters at BF16."""
    data = json.loads((FIXTURES / "gemma-3-27b.json").read_text("utf-8"))
    config = {"architectures": ["Gemma3ForCausalLM"], **data["text_config"]}
    config["torch_dtype"] = "bfloat16"
    specs = written(tmp_path, config, "gemma-text")
    compiled = compile_catalog(catalog_or_raise(specs))
    engine = compiled.model_engine
    text = engine.row("gemma-text", "decode-b1-l8192", "nvidia-h100-sxm", "bf16")
    whole = engine.row("gemma-3-27b", "decode-b1-l8192", "nvidia-h100-sxm", "bf16")
    assert (text.flops, text.bytes, text.time) == (whole.flops, whole.bytes, whole.time)
    assert text.fit is not None and whole.fit is not None
    assert 2 * 423_060_336 == whole.fit.ledger.weights - text.fit.ledger.weights
    assert 52 == compiled.catalog.models["gemma-text"].parameters["local"]


def test_gemma_2_alternates_and_takes_its_own_defaults(tmp_path: Path) -> None:
    """A Gemma 2 9B config (its published sizes; no `tie_word_embeddings` or
    `layer_types`, as it omits them) imports with every other layer over the window (21 of
    42), no norms on the heads, and Gemma2Config's defaults quoted; its weights are the
    published 9,241,705,984 parameters at BF16."""
    config = {
        "architectures": ["Gemma2ForCausalLM"],
        "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0,
        "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 3584,
        "intermediate_size": 14336,
        "max_position_embeddings": 8192,
        "model_type": "gemma2",
        "num_attention_heads": 16,
        "num_hidden_layers": 42,
        "num_key_value_heads": 8,
        "query_pre_attn_scalar": 256,
        "sliding_window": 4096,
        "torch_dtype": "bfloat16",
        "vocab_size": 256000,
    }
    specs = written(tmp_path, config, "gemma-2-9b")
    text = (specs / "models" / "gemma-2-9b.yaml").read_text("utf-8")
    assert "Gemma2Config's default" in text and "21 of 42 sliding" in text
    compiled = compile_catalog(catalog_or_raise(specs))
    model = compiled.catalog.models["gemma-2-9b"]
    assert 21 == model.parameters["local"]
    assert not {"q-norm", "k-norm"} & {s.id for s in model.steps}
    row = compiled.model_engine.row("gemma-2-9b", "decode-b1-l2048", "nvidia-h100-sxm", "bf16")
    assert row.fit is not None
    assert 2 * 9_241_705_984 == row.fit.ledger.weights


def test_write_refuses_an_existing_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--write over models/ID.yaml: exit 2, the file untouched; a new id is written whole."""
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    before = (specs / "models" / "mixtral-8x7b.yaml").read_bytes()
    args = ["import", "hf-config", str(FIXTURES / "mixtral-8x7b.json"), "--url", URL]
    code, _ = run(*args, "--id", "mixtral-8x7b", "--specs", str(specs), "--write")
    assert 2 == code
    assert "exists" in capsys.readouterr().err
    assert before == (specs / "models" / "mixtral-8x7b.yaml").read_bytes()
    code, _ = run(*args, "--id", "mixtral-copy", "--specs", str(specs), "--write")
    assert 0 == code
    written = (specs / "models" / "mixtral-copy.yaml").read_text("utf-8")
    assert written == imported("mixtral-8x7b.json", "mixtral-copy")
    assert [] == [p.name for p in (specs / "models").iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--id", "Mixtral_8x7B"),
        ("--id", "<b>x</b>"),
        ("--url", "http://huggingface.co/org/name/config.json"),
        ("--url", 'https://huggingface.co/org/name"><script>'),
        ("--url", "https://huggingface.co/org name"),
    ],
)
def test_bad_id_or_url_is_a_usage_error(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2, the option named, nothing printed."""
    args = {"--id": "x", "--url": URL, option: value}
    code, out = run(
        "import", "hf-config", str(FIXTURES / "mixtral-8x7b.json"), *sum(args.items(), ())
    )
    assert (2, "") == (code, out)
    assert f"error: argument {option}: " in capsys.readouterr().err


def test_deeply_nested_and_oversized_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config nested 100,000 deep or over a megabyte is one located line, exit 1."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    big = tmp_path / "big.json"
    big.write_text('{"pad": "' + "x" * (2 << 20) + '"}')
    raw = tmp_path / "latin1.json"
    raw.write_bytes(b'{\n  "architectures": ["Llama\xe9"]\n}\n')
    for path, expected in (
        (deep, ":1: error: not JSON"),
        (big, ":1: error: "),
        (raw, ":2: error: not UTF-8"),
    ):
        code, out = run("import", "hf-config", str(path), "--id", "x", "--url", URL)
        err = capsys.readouterr().err
        assert (1, "") == (code, out)
        assert err.startswith(f"{path}{expected}"), err
        assert 1 == len(err.splitlines())


def test_a_spec_that_does_not_check_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An import that would break the catalog (test-13b's place, whose phases the method's
    examples name) is one located line, exit 1, and nothing is printed or written."""
    specs = tmp_path / "specs"
    shutil.copytree(bundled_specs_dir(), specs)
    before = sorted(p.name for p in (specs / "models").iterdir())
    config = FIXTURES / "llama-2-7b.json"
    args = ["import", "hf-config", str(config), "--id", "test-13b", "--url", URL]
    code, out = run(*args, "--specs", str(specs))
    err = capsys.readouterr().err
    assert (1, "") == (code, out)
    assert err.startswith(f"{config}:1: error: the spec written from it does not check: ")
    assert "unknown phase 'prefill' of model 'test-13b'" in err
    assert 1 == len(err.splitlines())
    assert before == sorted(p.name for p in (specs / "models").iterdir())
