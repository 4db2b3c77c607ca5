"""The bundled language models: exact counts summed by hand from the published configurations.

Every expected figure here is computed independently of rooflinec's kernels and model
engine, from the configuration values quoted in the model specs (layers, hidden size,
heads, KV heads, MLP width, vocabulary, experts) and the per-step formulas the kernels
document, with Python integers and Fractions only.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import pytest

from rooflinec.assemble import catalog_or_raise
from rooflinec.engine.compiler import Compiled, compile_catalog
from rooflinec.engine.models import ModelResult, StepResult
from tests.specfactory import BUNDLED

DEVICE = "nvidia-h100-sxm"
W = 2  # BF16 bytes per value

# The published configurations, as quoted in specs/models/*.yaml.
LLAMA_2_7B = {"layers": 32, "h": 4096, "hq": 32, "hkv": 32, "f": 11008, "V": 32000}
LLAMA_3_8B = {"layers": 32, "h": 4096, "hq": 32, "hkv": 8, "f": 14336, "V": 128256}
LLAMA_3_70B = {"layers": 80, "h": 8192, "hq": 64, "hkv": 8, "f": 28672, "V": 128256}
MIXTRAL = {"layers": 32, "h": 4096, "hq": 32, "hkv": 8, "f": 14336, "V": 32000, "E": 8, "k": 2}


@cache
def compiled() -> Compiled:
    return compile_catalog(catalog_or_raise(BUNDLED))


def row(model: str, phase: str) -> ModelResult:
    result = compiled().model_result(model, phase, DEVICE, "bf16")
    assert result is not None, (model, phase)
    return result


def step(result: ModelResult, name: str) -> StepResult:
    return next(s for s in result.steps if s.step == name)


def parameters(c: dict[str, int]) -> int:
    """A Llama-style model's parameter count from its configuration, by hand."""
    layers, h, hq, hkv, f, V = (c[k] for k in ("layers", "h", "hq", "hkv", "f", "V"))
    d = h // hq
    attention = h * h + 2 * h * hkv * d + h * h  # q, k, v, o
    experts = c.get("E", 1)
    mlp = experts * 3 * h * f + (h * experts if "E" in c else 0)  # gate, up, down (+ router)
    norms = 2 * h
    return layers * (attention + mlp + norms) + h + 2 * V * h  # final norm, embedding, logits


def parameters_from_steps(model: str) -> int:
    """The same count read back from a model's step shapes: every weight a step reads."""
    result = row(model, next(iter(catalog_or_raise(BUNDLED).models[model].phases)))
    total = 0
    experts = catalog_or_raise(BUNDLED).models[model].parameters.get("E", 1)
    for s in result.steps:
        shape = s.shape
        if s.kernel == "linear":
            total += s.count * shape["K"] * shape["N"]
        elif s.kernel == "moe-linear":
            total += s.count * experts * shape["K"] * shape["N"]
        elif s.kernel == "moe-router":
            total += s.count * shape["h"] * shape["E"]
        elif s.kernel == "rmsnorm":
            total += s.count * shape["h"]
        elif s.kernel == "embedding":
            # the table has as many rows as the logits have outputs (untied embeddings)
            logits = next(t for t in result.steps if t.step == "logits")
            total += logits.shape["N"] * shape["h"]
    return total


@pytest.mark.parametrize(
    ("model", "config", "exact", "published"),
    [
        ("llama-2-7b", LLAMA_2_7B, 6_738_415_616, "6.74"),
        ("llama-3-8b", LLAMA_3_8B, 8_030_261_248, "8.03"),
        ("llama-3-70b", LLAMA_3_70B, 70_553_706_496, "70.55"),
        ("mixtral-8x7b", MIXTRAL, 46_702_792_704, "46.70"),
    ],
)
def test_parameter_counts_match_the_published_sizes(
    model: str, config: dict[str, int], exact: int, published: str
) -> None:
    """Parameters from the configuration and from the steps' weights agree exactly, and
    round to the published size (Llama 3 8B: 8.03 billion; Mixtral 8x7B: 46.7 billion)."""
    assert parameters(config) == exact
    assert parameters_from_steps(model) == exact
    assert f"{exact / 10**9:.2f}" == published


def test_llama_3_8b_decode_flops_at_8192_keys() -> None:
    """One decode token at batch 1 with 8192 keys: every step's operations by hand."""
    c = LLAMA_3_8B
    layers, h, hq, hkv, f, V = (c[k] for k in ("layers", "h", "hq", "hkv", "f", "V"))
    d, b, L = h // hq, 1, 8192
    n = b  # tokens in the pass
    linear = 2 * n * (h * h + 2 * h * hkv * d + h * h + 3 * h * f)
    attention = 4 * b * L * hq * d  # the whole cache: causal with s = 1
    norms = 2 * (4 * n * h + 3 * n)
    elementwise = 2 * n * h + 5 * n * f  # two residual adds, SwiGLU
    per_layer = linear + attention + norms + elementwise
    once = n * h + (4 * n * h + 3 * n) + 2 * b * h * V  # embedding copy, final norm, logits
    expected = layers * per_layer + once
    assert expected == 19_307_909_315
    result = row("llama-3-8b", "decode-b1-l8192")
    assert result.flops == expected
    assert result.tokens == 1


def test_llama_3_8b_decode_bytes_at_8192_keys() -> None:
    """The pass's DRAM bytes: weights at 2 B, the whole KV cache, activations, by hand."""
    c = LLAMA_3_8B
    layers, h, hq, hkv, f, V = (c[k] for k in ("layers", "h", "hq", "hkv", "f", "V"))
    d, b, s, L = h // hq, 1, 1, 8192
    n = b * s
    kv = hkv * d

    def linear(m: int, out: int, inp: int) -> int:
        return W * (m * inp + m * out) + W * inp * out

    per_layer = (
        2 * W * (2 * n * h + h)  # two RMSNorms
        + linear(n, h, h) * 2  # q, o
        + linear(n, kv, h) * 2  # k, v
        + W * 2 * n * hq * d
        + W * 2 * b * kv * (L + s)  # attention: Q, O, cache read and append
        + 2 * W * 3 * n * h  # two residual adds
        + linear(n, f, h) * 2  # gate, up
        + W * 3 * n * f  # SwiGLU
        + linear(n, h, f)  # down
    )
    once = (W * n * h + W * n * h + 4 * n) + W * (2 * n * h + h) + linear(b, V, h)
    expected = layers * per_layer + once
    assert expected == 16_095_160_836
    assert row("llama-3-8b", "decode-b1-l8192").bytes["dram"] == expected


def test_kv_cache_bytes_per_token() -> None:
    """A token's KV cache, 2 x layers x hkv x head size x 2 B: 131,072 B for Llama 3 8B,
    524,288 B for Llama 2 7B, and for Llama 3 70B twice the scaling book's int8 figure
    2 * 8 * 128 * 80 = 163,840 B ("160kB")."""
    for model, config, expected, phases in [
        ("llama-3-8b", LLAMA_3_8B, 131_072, ("decode-b1-l2048", "decode-b1-l8192")),
        ("llama-2-7b", LLAMA_2_7B, 524_288, ("decode-b1-l2048", "decode-b1-l4096")),
        ("llama-3-70b", LLAMA_3_70B, 2 * 163_840, ("decode-b32-l8192", "decode-b64-l4096")),
    ]:
        d = config["h"] // config["hq"]
        assert 2 * config["layers"] * config["hkv"] * d * W == expected
        # read back from the attention steps: the cache bytes per sequence and key
        short, long = (step(row(model, p), "attention") for p in phases)
        cache_bytes = [
            a.bytes["dram"] - a.count * W * 2 * a.shape["b"] * a.shape["hq"] * d
            for a in (short, long)
        ]
        for a, total in zip((short, long), cache_bytes, strict=True):
            assert total == expected * a.shape["b"] * (a.shape["L"] + a.shape["s"])


def test_decode_attention_reads_the_whole_cache() -> None:
    """Decode attention grows with the keys (unlike llm-analysis): 4*b*L*hq*d per layer."""
    short = step(row("llama-3-8b", "decode-b1-l2048"), "attention")
    long = step(row("llama-3-8b", "decode-b1-l8192"), "attention")
    assert short.flops == 32 * 4 * 1 * 2048 * 32 * 128
    assert long.flops == 4 * short.flops


def test_prefill_attention_is_causal_and_exact() -> None:
    """A 2048-token prefill counts the lower triangle with its diagonal, 2*hq*d*s*(s+1)
    per layer: 2049/4096 of the non-causal 4*s^2*hq*d."""
    attention = step(row("llama-3-8b", "prefill-s2048"), "attention")
    assert attention.flops == 32 * 2 * 32 * 128 * 2048 * 2049
    assert attention.flops / (32 * 4 * 2048**2 * 32 * 128) == Fraction(2049, 4096)


def test_w4a16_streams_the_projection_weights_at_half_a_byte() -> None:
    """4-bit weights save 1.5 B on every projection weight of every layer and nothing
    else: the operations are unchanged, and decode at batch 1 moves 3.2 times fewer bytes."""
    c = LLAMA_3_8B
    h, hkv, f, d = c["h"], c["hkv"], c["f"], c["h"] // c["hq"]
    projection_weights = c["layers"] * (2 * h * h + 2 * h * hkv * d + 3 * h * f)
    plain, quantized = (
        row("llama-3-8b", "decode-b1-l2048"),
        row("llama-3-8b-w4a16", "decode-b1-l2048"),
    )
    assert quantized.flops == plain.flops
    saved = plain.bytes["dram"] - quantized.bytes["dram"]
    assert saved == projection_weights * (W - Fraction(1, 2))
    assert round(plain.bytes["dram"] / quantized.bytes["dram"], 1) == Fraction(32, 10)


def test_mixtral_reads_the_experts_its_tokens_reach() -> None:
    """One decode token reads its 2 experts; 32 tokens and a prefill read all 8; the
    experts' operations follow the 2 active experts per token, not all 8."""
    c = MIXTRAL
    h, f = c["h"], c["f"]
    one = step(row("mixtral-8x7b", "decode-b1-l2048"), "expert-up")
    batch = step(row("mixtral-8x7b", "decode-b32-l4096"), "expert-up")
    prefill = step(row("mixtral-8x7b", "prefill-s2048"), "expert-up")
    assert (one.shape["X"], batch.shape["X"], prefill.shape["X"]) == (2, 8, 8)
    assert one.shape["M"] == 2 and batch.shape["M"] == 64
    assert one.flops == 32 * 2 * 2 * f * h
    assert one.bytes["dram"] == 32 * (W * (2 * h + 2 * f) + W * 2 * h * f)
    assert batch.bytes["dram"] == 32 * (W * (64 * h + 64 * f) + W * 8 * h * f)


DEEPSEEK_V3 = {
    "layers": 61, "dense": 3, "h": 7168, "hq": 128, "ql": 1536, "r": 512, "dr": 64,
    "dn": 128, "dv": 128, "fd": 18432, "f": 2048, "V": 129280, "E": 256, "k": 8, "S": 1,
}  # fmt: skip


def test_deepseek_v3_weights_are_671_billion_parameters_at_fp8_blocks() -> None:
    """The ledger's weights on one chip, summed from the config: the linear layers at FP8
    with an FP32 scale per 128 x 128 block (4097/4096 B a value), the embeddings, routers
    and norms at BF16; 671.0 B parameters, as DeepSeek's README_WEIGHTS.md says."""
    c = DEEPSEEK_V3
    h, hq, ql, r, dr, dn, dv = (c[n] for n in ("h", "hq", "ql", "r", "dr", "dn", "dv"))
    attention = h * ql + h * (r + dr) + ql * hq * (dn + dr) + r * hq * (dn + dv) + hq * dv * h
    expert = 3 * h * c["f"]
    moe = c["layers"] - c["dense"]
    linear = (
        c["layers"] * attention + c["dense"] * 3 * h * c["fd"] + moe * (c["E"] + c["S"]) * expert
    )
    other = moe * h * c["E"] + c["layers"] * (2 * h + ql + r) + 2 * c["V"] * h + h
    assert 671_026_404_352 == linear + other
    result = compiled().model_result("deepseek-v3", "decode-b1-l2048", DEVICE, "fp8")
    assert result is not None and result.fit is not None
    assert Fraction(4097, 4096) * linear + 2 * other == result.fit.ledger.weights
    assert result.fit.fits is False


def test_deepseek_v3_latent_attention_absorbs_in_decode_and_expands_in_prefill() -> None:
    """Operations of one layer's attention: the absorbed form's for a decode step, the
    expanded form's for a prefill (each the fewer of the two); the latent cache is read
    once for all heads at BF16."""
    c = DEEPSEEK_V3
    hq, r, dr, dn, dv = (c[n] for n in ("hq", "r", "dr", "dn", "dv"))

    def absorbed(s: int, L: int) -> int:
        return 2 * hq * s * r * (dn + dv) + hq * s * (2 * L - s + 1) * (2 * r + dr)

    def expanded(s: int, L: int) -> int:
        return 2 * hq * L * r * (dn + dv) + hq * s * (2 * L - s + 1) * (dn + dr + dv)

    def attention(phase: str) -> StepResult:
        result = compiled().model_result("deepseek-v3", phase, DEVICE, "fp8")
        assert result is not None
        return step(result, "attention")

    decode, prefill = attention("decode-b1-l2048"), attention("prefill-s2048")
    assert absorbed(1, 2048) < expanded(1, 2048)
    assert 61 * absorbed(1, 2048) == decode.flops
    assert expanded(2048, 2048) < absorbed(2048, 2048)
    assert 61 * expanded(2048, 2048) == prefill.flops
    weights = Fraction(4097, 4096) * hq * r * (dn + dv)
    assert 61 * (1 * hq * (dn + dr + dv) + weights + 2 * 2049 * (r + dr)) == decode.bytes["dram"]


def test_gemma_3_27b_weights_count_the_text_model_and_the_vision_tower() -> None:
    """27.4 B parameters at BF16: 62 layers (attention 2*h*hq*d + 2*h*hkv*d, a GeGLU MLP,
    four norms of h and two of d), the tied embedding once, and the SigLIP tower with
    its projection, summed here from the config's sizes."""
    layers, h, hq, hkv, d, f, V = 62, 5376, 32, 16, 128, 21504, 262208
    vl, vh, vf, patch, image = 27, 1152, 4304, 14, 896
    text = layers * (2 * h * hq * d + 2 * h * hkv * d + 3 * h * f + 4 * h + 2 * d) + V * h + h
    layer = 4 * (vh * vh + vh) + (vh * vf + vf) + (vf * vh + vh) + 2 * 2 * vh
    vision = (
        vl * layer
        + (image // patch) ** 2 * vh  # position embeddings
        + 3 * patch * patch * vh
        + vh  # the patch embedding and its bias
        + 2 * vh  # the final layer norm
        + vh * h
        + vh  # the projection into the text model and its norm
    )
    assert (27_009_346_304, 423_060_336) == (text, vision)
    result = compiled().model_result("gemma-3-27b", "decode-b1-l8192", DEVICE, "bf16")
    assert result is not None and result.fit is not None
    assert W * (text + vision) == result.fit.ledger.weights
