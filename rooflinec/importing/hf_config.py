"""`import hf-config`: a model spec written from a Hugging Face `config.json`.

The config's sizes become the spec's parameters under the short names the bundled specs
use (`layers`, `h`, `hq`, `hkv`, `f`, `V`, and `d`, `E`, `k` where they apply), each
with a comment quoting the config's key and value, and the steps, memory ledger and
assumptions are those of the bundled spec of the same family (Llama 3 for the dense
decoders, Mixtral for the routed experts, DeepSeek-V3 for latent attention with routed
and shared experts, Gemma 3 27B for Gemma 3), so that a config imports to the figures of
the spec written by hand; Gemma 2 takes Gemma 3's steps without the norms on the heads.
A Gemma config may omit sizes transformers' Gemma2Config or Gemma3TextConfig gives
defaults for; the parameter's comment then quotes the default.

A `sliding_window` gives attention over the window (kernel attention-kv-window) and a
KV ledger of `min(L, W)` keys, on every layer or on those `layer_types` names
`sliding_attention`; an MXFP4 checkpoint that converts the experts alone (gpt-oss) gives
the expert steps and the ledger their own width.

Reading is strict: a file that is not one JSON object, a size that is not a positive
whole number, an architecture not imported (or imported later: Qwen2-MoE) is one
`FILE:LINE: error: ...` line, at the member's line (inside `text_config` or
`vision_config` where it is nested); nothing is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BYTES = 1 << 20  # a config.json is a few kilobytes
MAX_SIZE = 10**9  # the largest width, count or vocabulary a config may give
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")

# Each imported architecture and its family: which template its spec is written from.
FAMILIES: dict[str, str] = {
    "LlamaForCausalLM": "dense",
    "MistralForCausalLM": "dense",
    "Qwen2ForCausalLM": "dense",
    "Qwen3ForCausalLM": "dense",
    "MixtralForCausalLM": "experts",
    "Qwen3MoeForCausalLM": "experts",
    "GptOssForCausalLM": "experts",
    "DeepseekV3ForCausalLM": "mla",
    "Gemma2ForCausalLM": "gemma",
    "Gemma3ForCausalLM": "gemma",
    "Gemma3ForConditionalGeneration": "gemma",
}
# Architectures recognised but not imported yet, with what they need.
LATER: dict[str, str] = {
    "Qwen2MoeForCausalLM": "a shared expert behind its own sigmoid gate beside the routed ones",
}
# float16 and bfloat16 are both two bytes, and one peak on the chips the catalog quotes:
# precisions.yaml names them together ("BF16 or FP16").
PRECISIONS = {"bfloat16": "bf16", "float16": "bf16", "float32": "fp32"}


class ConfigError(Exception):
    """A problem with the config file, at a line of it (1 when it is the whole file's)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: error: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass(frozen=True)
class Parameter:
    """One parameter of the spec and the config member it is read from."""

    name: str
    value: int
    key: str  # the config's key
    quoted: str  # the member as the config writes it, for the comment


@dataclass(frozen=True)
class Imported:
    """What the config gives: its architecture, family, parameters and flags."""

    architecture: str
    family: str
    parameters: tuple[Parameter, ...]
    precision: str
    precision_key: str
    tied: bool
    max_context: int | None
    notes: tuple[str, ...]  # what the config holds that the steps do not count
    # Sliding-window attention: "none", "all" layers (parameter W), or "mixed" (W, and
    # `local` windowed layers of `layers`)
    window: str = "none"
    # The experts' weights' precision when the checkpoint quantizes them alone (mxfp4)
    expert_width: str | None = None
    # The linear layers' weights' precision when the checkpoint quantizes them all
    # (DeepSeek-V3's FP8 with a scale per 128 x 128 block); None: the model's precision
    weight_width: str | None = None

    def value(self, name: str) -> int:
        return next(p.value for p in self.parameters if p.name == name)

    def has(self, name: str) -> bool:
        return any(p.name == name for p in self.parameters)


def read_config(path: Path) -> tuple[dict[str, Any], Callable[[str], int]]:
    """The config as a mapping and a function giving a top-level key's line."""
    name = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ConfigError(name, 1, f"{size:,} bytes: a config.json is at most {MAX_BYTES:,}")
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(name, 1, f"cannot read it ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(name, line, "not UTF-8 text") from None

    def no_constant(token: str) -> Any:
        raise ValueError(f"{token} is not a JSON number")

    try:
        data = json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(name, exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:
        message = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise ConfigError(name, 1, f"not JSON: {message}") from None
    if not isinstance(data, dict):
        raise ConfigError(name, 1, "not a JSON object: a config.json holds one object of keys")
    lines = text.splitlines()

    def line_of(key: str) -> int:
        """The line of `key`, or of `OUTER.KEY`: KEY's first line after OUTER's."""
        start = 1
        for part in key.split("."):
            pattern = re.compile(r'"' + re.escape(part) + r'"\s*:')
            start = next(
                (n for n, line in enumerate(lines[start - 1 :], start) if pattern.search(line)),
                start,
            )
        return start

    return data, line_of


def interpret(path: Path) -> Imported:
    """The architecture, parameters and flags of the config at `path`."""
    data, line_of = read_config(path)
    name = str(path)

    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(name, line_of(key), message)

    architectures = data.get("architectures")
    if (
        not isinstance(architectures, list)
        or len(architectures) != 1
        or not isinstance(architectures[0], str)
    ):
        raise fail("architectures", '"architectures" must list one architecture by name')
    arch = architectures[0]
    if arch in LATER:
        raise fail(
            "architectures",
            f"architecture {_shown(arch)} is not imported yet: it has {LATER[arch]}",
        )
    family = FAMILIES.get(arch)
    if family is None:
        known = ", ".join(sorted(FAMILIES))
        raise fail(
            "architectures",
            f"architecture {_shown(arch)} is not one rooflinec imports (it imports {known})",
        )

    def whole(key: str, what: str) -> int:
        if key not in data:
            raise ConfigError(name, 1, f'no "{key}" ({what}) in the config')
        return _size(data[key], f'"{key}" ({what})', key, fail)

    def member(pname: str, key: str, what: str) -> Parameter:
        value = whole(key, what)
        return Parameter(pname, value, key, f'"{key}": {value}')

    if family == "mla":
        return _latent(data, arch, member, fail)
    if family == "gemma":
        return _gemma(data, arch, name, fail)
    params = [
        member("layers", "num_hidden_layers", "decoder layers"),
        member("h", "hidden_size", "hidden width"),
        member("hq", "num_attention_heads", "query heads"),
    ]
    h, hq = params[1].value, params[2].value
    if "num_key_value_heads" in data and data["num_key_value_heads"] is not None:
        params.append(member("hkv", "num_key_value_heads", "key-value heads"))
    else:  # multi-head attention: as many key-value heads as query heads
        params.append(Parameter("hkv", hq, "num_attention_heads", f'"num_attention_heads": {hq}'))
    hkv = params[-1].value
    if hq % hkv:
        raise fail(
            "num_key_value_heads", f"{hq} query heads do not share {hkv} key-value heads evenly"
        )
    head_dim = data.get("head_dim")
    if head_dim is not None:
        d = whole("head_dim", "head size")
        if h % hq or d != h // hq:
            params.append(Parameter("d", d, "head_dim", f'"head_dim": {d}'))
    elif h % hq:
        raise fail(
            "hidden_size",
            f"the hidden width {h} is not a whole number of {hq} heads, and no head_dim is given",
        )
    notes: list[str] = []
    if family == "experts":
        experts_key = "num_local_experts" if "num_local_experts" in data else "num_experts"
        params.append(
            member(
                "f",
                "moe_intermediate_size" if "moe_intermediate_size" in data else "intermediate_size",
                "expert MLP width",
            )
        )
        params.append(member("V", "vocab_size", "vocabulary"))
        params.append(member("E", experts_key, "routed experts"))
        params.append(member("k", "num_experts_per_tok", "experts per token"))
        if params[-1].value > params[-2].value:
            raise fail(
                "num_experts_per_tok", f"{params[-1].value} experts per token of {params[-2].value}"
            )
        sparse = data.get("decoder_sparse_step", 1)
        dense_layers = data.get("mlp_only_layers") or []
        if sparse != 1 or dense_layers:
            key = "decoder_sparse_step" if sparse != 1 else "mlp_only_layers"
            raise fail(key, "dense MLP layers between the expert layers are not imported yet")
        shared = data.get("shared_expert_intermediate_size") or 0
        if shared:
            raise fail("shared_expert_intermediate_size", "shared experts are not imported yet")
    else:
        params.append(member("f", "intermediate_size", "MLP width"))
        params.append(member("V", "vocab_size", "vocabulary"))
    act = data.get("hidden_act", "silu")
    if act != "silu":
        raise fail(
            "hidden_act", f"a gated MLP of activation {_shown(act)}: only SwiGLU (silu) is imported"
        )
    windowed = _window(data, params, fail, member)
    expert_width = _quantized(data, family, fail)
    dtype = data.get("torch_dtype", data.get("dtype"))
    precision_key = "torch_dtype" if "torch_dtype" in data else "dtype"
    if dtype is None and expert_width is not None:
        # A checkpoint whose experts alone are quantized: the rest, and the activations,
        # at BF16 (the dtype the config does not give is the model's own).
        dtype, precision_key = "bfloat16", "quantization_config"
        notes.append(
            "The config gives no torch_dtype: the modules its quantization does not convert"
            " (attention, router, embeddings) and the activations are taken at BF16."
        )
    if dtype not in PRECISIONS:
        known = ", ".join(PRECISIONS)
        raise fail(precision_key, f"weights of type {_shown(dtype)}: rooflinec imports {known}")
    tied = data.get("tie_word_embeddings", False)
    if not isinstance(tied, bool):
        raise fail(
            "tie_word_embeddings",
            f'"tie_word_embeddings" must be true or false, not {_shown(tied)}',
        )
    if arch == "GptOssForCausalLM":
        notes.append(
            "The biases of the attention projections and of the experts, each head's attention"
            " sink (one logit added to its softmax) and the SwiGLU's clamp (swiglu_limit) are"
            " not counted: under 0.04 % of the parameters and of the operations."
        )
    elif data.get("attention_bias") or arch == "Qwen2ForCausalLM":
        notes.append(
            "The query, key and value projections' biases (h + 2 x hkv x d values a layer)"
            " are not counted."
        )
    if arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM"):
        notes.append(
            "The RMSNorms of each head's queries and keys (q_norm, k_norm) are not counted:"
            " 2 x d weights a layer."
        )
    context = data.get("max_position_embeddings")
    max_context = context if type(context) is int and context >= 1 else None
    return Imported(
        arch,
        family,
        tuple(params),
        PRECISIONS[dtype],
        precision_key,
        tied,
        max_context,
        tuple(notes),
        windowed,
        expert_width,
    )


def _size(value: Any, shown: str, key: str, fail: Callable[[str, str], ConfigError]) -> int:
    """A config's width, count or vocabulary: a whole number from 1 to `MAX_SIZE`, or an
    error at `key`'s line naming it as `shown`."""
    if type(value) is not int or not 1 <= value <= MAX_SIZE:
        raise fail(
            key, f"{shown} must be a whole number from 1 to {MAX_SIZE:,}, not {_shown(value)}"
        )
    return value


def _latent(
    data: dict[str, Any],
    arch: str,
    member: Callable[[str, str, str], Parameter],
    fail: Callable[[str, str], ConfigError],
) -> Imported:
    """A DeepSeek-V3 config: multi-head latent attention (a low-rank query, one cached
    latent of kv_lora_rank + qk_rope_head_dim values per token), dense MLPs in the first
    `first_k_dense_replace` layers, routed and shared experts in the rest, and the FP8
    checkpoint's 128 x 128 block scales."""
    if "q_lora_rank" in data and data["q_lora_rank"] is None:
        raise fail(
            "q_lora_rank",
            "latent attention without a query latent (q_lora_rank null) is not imported yet",
        )
    params = [
        member("layers", "num_hidden_layers", "decoder layers"),
        member("dense", "first_k_dense_replace", "dense MLP layers before the experts"),
        member("h", "hidden_size", "hidden width"),
        member("hq", "num_attention_heads", "query heads"),
        member("ql", "q_lora_rank", "the query latent"),
        member("r", "kv_lora_rank", "the key-value latent"),
        member("dr", "qk_rope_head_dim", "the rotary part of a head"),
        member("dn", "qk_nope_head_dim", "the no-position part of a head"),
        member("dv", "v_head_dim", "a value head"),
        member("fd", "intermediate_size", "the dense MLP width"),
        member("f", "moe_intermediate_size", "expert MLP width"),
        member("V", "vocab_size", "vocabulary"),
        member("E", "n_routed_experts", "routed experts"),
        member("k", "num_experts_per_tok", "experts per token"),
        member("S", "n_shared_experts", "shared experts"),
    ]
    values = {p.name: p.value for p in params}
    if values["dense"] >= values["layers"]:
        raise fail("first_k_dense_replace", f"{values['dense']} dense layers of {values['layers']}")
    if values["k"] > values["E"]:
        raise fail("num_experts_per_tok", f"{values['k']} experts per token of {values['E']}")
    if data.get("moe_layer_freq", 1) != 1:
        raise fail(
            "moe_layer_freq", "dense MLP layers between the expert layers are not imported yet"
        )
    act = data.get("hidden_act", "silu")
    if act != "silu":
        raise fail(
            "hidden_act", f"a gated MLP of activation {_shown(act)}: only SwiGLU (silu) is imported"
        )
    config = data.get("quantization_config")
    weight_width = None
    precision, precision_key = data.get("torch_dtype"), "torch_dtype"
    if config is not None:
        if (
            not isinstance(config, dict)
            or config.get("quant_method") != "fp8"
            or config.get("weight_block_size") != [128, 128]
        ):
            raise fail(
                "quantization_config",
                "an FP8 checkpoint is imported with 128 x 128 weight blocks (weight_block_size)",
            )
        weight_width, precision, precision_key = "fp8-block128", "fp8", "quantization_config"
    elif precision in PRECISIONS:
        precision = PRECISIONS[precision]
    else:
        known = ", ".join(PRECISIONS)
        raise fail("torch_dtype", f"weights of type {_shown(precision)}: rooflinec imports {known}")
    tied = data.get("tie_word_embeddings", False)
    if tied is not False:
        raise fail(
            "tie_word_embeddings",
            "tied input and output embeddings are not imported with latent attention",
        )
    notes = [
        "The router's choice within groups (n_group, topk_group) and its per-expert bias are"
        " not modelled: the steps read the experts' weights as `experts:` routes them.",
    ]
    mtp = data.get("num_nextn_predict_layers")
    if type(mtp) is int and mtp >= 1:
        notes.append(
            f"The checkpoint's {mtp} multi-token-prediction module(s) (num_nextn_predict_layers)"
            " are not loaded: a phase with `speculation: {k: 1, ...}` runs their verify pass,"
            " the module's own drafting not counted."
        )
    context = data.get("max_position_embeddings")
    return Imported(
        arch,
        "mla",
        tuple(params),
        precision,
        precision_key,
        False,
        context if type(context) is int and context >= 1 else None,
        tuple(notes),
        weight_width=weight_width,
    )


# The defaults of transformers' Gemma2Config and Gemma3TextConfig that a config may
# omit, as configuration_gemma2.py and configuration_gemma3.py write them (quoted in the
# parameter's comment): the class, and per key the value and how the file writes it.
GEMMA_DEFAULTS: dict[str, tuple[str, dict[str, tuple[int | str | bool, str]]]] = {
    "Gemma2ForCausalLM": (
        "Gemma2Config",
        {
            "vocab_size": (256_000, "vocab_size: int = 256000"),
            "head_dim": (256, "head_dim: int = 256"),
            "sliding_window": (4096, "sliding_window: int | None = 4096"),
            "hidden_activation": (
                "gelu_pytorch_tanh",
                'hidden_activation: str = "gelu_pytorch_tanh"',
            ),
            "tie_word_embeddings": (True, "tie_word_embeddings: bool = True"),
            "max_position_embeddings": (8192, "max_position_embeddings: int = 8192"),
        },
    ),
    "Gemma3": (
        "Gemma3TextConfig",
        {
            "vocab_size": (262_208, "vocab_size=262_208"),
            "sliding_window_pattern": (6, "sliding_window_pattern=6"),
            "hidden_activation": ("gelu_pytorch_tanh", 'hidden_activation="gelu_pytorch_tanh"'),
            "tie_word_embeddings": (True, "tie_word_embeddings=True"),
            "max_position_embeddings": (131_072, "max_position_embeddings=131_072"),
        },
    ),
}


def _gemma(
    data: dict[str, Any], arch: str, name: str, fail: Callable[[str, str], ConfigError]
) -> Imported:
    """A Gemma 2 or 3 config: the text model's sizes (under `text_config` for the
    multimodal Gemma3ForConditionalGeneration), transformers' defaults for what it omits,
    the layers over the sliding window (every other one in Gemma 2, five of six in Gemma 3,
    or those `layer_types` names), a GeGLU MLP, and the SigLIP vision tower's sizes (held
    in memory, not run)."""
    owner, defaults = GEMMA_DEFAULTS[arch if arch.startswith("Gemma2") else "Gemma3"]
    text = data.get("text_config", {}) if arch == "Gemma3ForConditionalGeneration" else data
    if not isinstance(text, dict):
        raise fail("text_config", '"text_config" must be an object of the text model\'s sizes')
    vision = data.get("vision_config") if arch == "Gemma3ForConditionalGeneration" else None
    if arch == "Gemma3ForConditionalGeneration" and not isinstance(vision, dict):
        raise fail(
            "vision_config", '"vision_config" must be an object of the vision tower\'s sizes'
        )

    def path(key: str, where: str = "") -> str:
        """`key` as `line_of` finds it inside its block."""
        if where:
            return f"vision_config.{key}"
        return f"text_config.{key}" if text is not data else key

    def given(block: dict[str, Any], key: str, what: str, where: str = "") -> int:
        if key not in block:
            if key in defaults and not where:
                return int(defaults[key][0])
            raise ConfigError(name, 1, f'no {where}"{key}" ({what}) in the config')
        return _size(block[key], f'{where}"{key}" ({what})', path(key, where), fail)

    def default(key: str) -> str:
        return f'no "{key}": {owner}\'s default, {defaults[key][1]}'

    def member(pname: str, key: str, what: str, where: str = "") -> Parameter:
        block = (vision or {}) if where else text
        value = given(block, key, what, where)
        if key not in block:
            return Parameter(pname, value, key, default(key))
        return Parameter(pname, value, key, f'{where}"{key}": {value}')

    params = [
        member("layers", "num_hidden_layers", "decoder layers"),
        member("h", "hidden_size", "hidden width"),
        member("hq", "num_attention_heads", "query heads"),
        member("hkv", "num_key_value_heads", "key-value heads"),
        member("d", "head_dim", "head size"),
        member("f", "intermediate_size", "MLP width"),
        member("V", "vocab_size", "vocabulary"),
        member("W", "sliding_window", "the sliding window"),
    ]
    layers, hq, hkv = params[0].value, params[2].value, params[3].value
    if hq % hkv:
        raise fail(
            path("num_key_value_heads"),
            f"{hq} query heads do not share {hkv} key-value heads evenly",
        )
    params.append(_gemma_local(text, layers, owner, defaults, given, path, fail))
    act = text.get("hidden_activation", defaults["hidden_activation"][0])
    if act != "gelu_pytorch_tanh":
        raise fail(
            path("hidden_activation"),
            f"a gated MLP of activation {_shown(act)}: Gemma is imported with GeGLU"
            " (gelu_pytorch_tanh)",
        )
    tied = data.get("tie_word_embeddings", text.get("tie_word_embeddings", True))
    if tied is not True:
        raise fail("tie_word_embeddings", "untied embeddings are not imported for Gemma")
    if vision is not None:
        if vision.get("vision_use_head", False) is not False:
            raise fail(
                "vision_config.vision_use_head",
                "a vision tower with a pooling head is not imported",
            )
        for pname, key, what in (
            ("vl", "num_hidden_layers", "vision layers"),
            ("vh", "hidden_size", "vision width"),
            ("vf", "intermediate_size", "vision MLP width"),
            ("patch", "patch_size", "vision patch size"),
            ("image", "image_size", "image size"),
        ):
            params.append(member(pname, key, what, "vision_config "))
        if params[-1].value % params[-2].value:
            raise fail(
                "vision_config.patch_size", "the image size is not a whole number of patches"
            )
    dtype = data.get("torch_dtype", text.get("torch_dtype"))
    if dtype not in PRECISIONS:
        known = ", ".join(PRECISIONS)
        raise fail("torch_dtype", f"weights of type {_shown(dtype)}: rooflinec imports {known}")
    notes = []
    if arch.startswith("Gemma2"):
        notes.append(
            "The tanh soft-capping of the attention scores and of the logits"
            " (attn_logit_softcapping, final_logit_softcapping) is not counted: a few"
            " operations a score and a logit."
        )
    context = text.get("max_position_embeddings", defaults["max_position_embeddings"][0])
    return Imported(
        arch,
        "gemma",
        tuple(params),
        PRECISIONS[dtype],
        "torch_dtype",
        True,
        context if type(context) is int and context >= 1 else None,
        tuple(notes),
        "mixed",
    )


def _gemma_local(
    text: dict[str, Any],
    layers: int,
    owner: str,
    defaults: dict[str, tuple[int | str | bool, str]],
    given: Callable[[dict[str, Any], str, str], int],
    path: Callable[[str], str],
    fail: Callable[[str, str], ConfigError],
) -> Parameter:
    """`local`, the layers over the sliding window: those `layer_types` names
    `sliding_attention`, else Gemma 3's five of every six (`sliding_window_pattern`, layer
    i global when i + 1 is a multiple of it) or Gemma 2's every other one (layer i
    sliding when i is even), as transformers' configurations default them."""
    if "layer_types" in text:
        return _sliding_layers(text["layer_types"], layers, path("layer_types"), fail)
    if "sliding_window_pattern" not in defaults:  # Gemma 2
        local = layers - layers // 2
        return Parameter(
            "local",
            local,
            "layer_types",
            f'no "layer_types": {owner}\'s default, "sliding_attention" if bool((i + 1) % 2)'
            f" (every other layer global), {local} of {layers} sliding",
        )
    pattern = given(text, "sliding_window_pattern", "layers per global layer")
    local = layers - layers // pattern
    if "sliding_window_pattern" in text:
        quoted = f'"sliding_window_pattern": {pattern}, {local} of {layers} sliding'
    else:
        quoted = (
            f'no "sliding_window_pattern": {owner}\'s default,'
            f" {defaults['sliding_window_pattern'][1]} (every sixth layer global),"
            f" {local} of {layers} sliding"
        )
    return Parameter("local", local, "sliding_window_pattern", quoted)


# A layer kind of `layer_types` and whether it attends over the sliding window.
LAYER_KINDS = {"sliding_attention": True, "full_attention": False}


def _window(
    data: dict[str, Any],
    params: list[Parameter],
    fail: Callable[[str, str], ConfigError],
    member: Callable[[str, str, str], Parameter],
) -> str:
    """Which layers attend over a sliding window: "none", "all" (`sliding_window` without
    `layer_types`, as Mistral 7B v0.1), or "mixed" (`layer_types` naming some layers
    `sliding_attention`, as gpt-oss); the window `W` and the windowed layers `local`
    joined to `params`."""
    if data.get("sliding_window") is None or data.get("use_sliding_window", True) is False:
        return "none"
    layers = params[0].value
    if data.get("layer_types") is None:
        params.append(member("W", "sliding_window", "the sliding window"))
        return "all"
    local = _sliding_layers(data["layer_types"], layers, "layer_types", fail)
    if local.value == 0:
        return "none"
    params.append(member("W", "sliding_window", "the sliding window"))
    if local.value == layers:
        return "all"
    params.append(local)
    return "mixed"


def _sliding_layers(
    kinds: Any, layers: int, key: str, fail: Callable[[str, str], ConfigError]
) -> Parameter:
    """`local`, the layers `layer_types` names `sliding_attention`, once it names each of
    the `layers` one of `LAYER_KINDS` (else an error at `key`'s line)."""
    if (
        not isinstance(kinds, list)
        or len(kinds) != layers
        or any(not isinstance(k, str) or k not in LAYER_KINDS for k in kinds)
    ):
        raise fail(
            key,
            f'"layer_types" must name each of the {layers} layers "sliding_attention" or'
            ' "full_attention"',
        )
    local = sum(1 for k in kinds if LAYER_KINDS[k])
    alternate = (
        len(kinds) > 1
        and kinds[0] != kinds[1]
        and all(k == kinds[i % 2] for i, k in enumerate(kinds))
    )
    pattern = "alternate" if alternate else "mix"
    return Parameter(
        "local",
        local,
        "layer_types",
        f'"layer_types": "sliding_attention" and "full_attention" {pattern},'
        f" {local} of {layers} sliding",
    )


def _quantized(
    data: dict[str, Any], family: str, fail: Callable[[str, str], ConfigError]
) -> str | None:
    """The experts' precision where the checkpoint quantizes the experts alone to MXFP4
    (gpt-oss: attention, router and embeddings not converted); None without
    quantization. Any other quantization is refused."""
    config = data.get("quantization_config")
    if config is None:
        return None
    if not isinstance(config, dict) or config.get("quant_method") != "mxfp4":
        raise fail("quantization_config", "a quantized checkpoint is not imported yet")
    kept = config.get("modules_to_not_convert")
    expected = {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens"}
    if family != "experts" or not isinstance(kept, list) or not expected <= set(map(str, kept)):
        raise fail(
            "quantization_config",
            "an MXFP4 checkpoint is imported when it converts the experts alone (attention,"
            " router and embeddings kept)",
        )
    return "mxfp4"


def _shown(value: Any) -> str:
    """A config value in a message: JSON, cut short, on one line."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------------------- writing


def render(imported: Imported, ident: str, url: str, today: str) -> str:
    """The model spec's YAML text."""
    m = imported
    lines = [
        "# yaml-language-server: $schema=../../schemas/model.schema.json",
        f"id: {ident}",
        f"name: {_quote(_name(m, ident))}",
        "description: >-",
        *(f"  {line}" for line in _wrap(_description(m, ident))),
        f"precision: {m.precision}",
        "parameters:",
    ]
    width = max(len(f"{p.name}: {p.value}") for p in m.parameters)
    for p in m.parameters:
        head = f"{p.name}: {p.value}"
        lines.append(f"  {head.ljust(width)}   # {SOURCE_ID}: {p.quoted}")
    lines += [
        "phases:",
        *(f"  {phase}" for phase in _phases(m.max_context)),
        "tokens: b*s",
    ]
    if m.family == "experts":
        lines.append("experts: {count: E, active: k}   # routing: spread (the default)")
    elif m.family == "mla":
        lines.append("experts: {count: E, active: k, shared: S}   # routing: spread (the default)")
    lines.append("steps:")
    lines += _steps(m)
    lines += ["", "memory:", *_memory(m)]
    lines += [
        "",
        "sources:",
        f"  {SOURCE_ID}:",
        f"    title: {_quote(_config_name(url, ident) + ' config.json')}",
        f"    publisher: {_quote(_publisher(url))}",
        f"    url: {url}",
        f"    read: {today}",
        f"    kind: {_kind(url)}",
        "    note: >-",
        *(f"      {line}" for line in _wrap(_source_note(m, url), 80)),
        "",
        "assumptions:",
        *(f"  - {_quote(a)}" for a in _assumptions(m)),
        "",
        "versions:",
        f"  - {{version: 1, date: {today}, change: Imported from the published config.json.}}",
        "",
    ]
    return "\n".join(lines)


def _steps(m: Imported) -> list[str]:
    """The spec's steps: its family's template, windowed where the layers are, with the
    weights' own widths."""
    if m.family == "mla":
        wb = m.weight_width or m.precision
        return ["  - " + step.replace("{wb}", wb) for step in _template("steps-mla.txt")]
    if m.family == "gemma":
        # Gemma 2 has no norms on the heads' queries and keys
        heads = m.architecture.startswith("Gemma3")
        return [
            "  - " + step
            for step in _template("steps-gemma.txt")
            if heads or not step.startswith(("{id: q-norm,", "{id: k-norm,"))
        ]
    d_text = "d" if m.has("d") else "(h/hq)"
    qo = "hq*d" if m.has("d") else "h"  # the queries' and the attention output's width
    bare = "d" if m.has("d") else "h/hq"  # the head size as a value of its own
    out = []
    for step in _template(f"steps-{m.family}.txt"):
        for own in _windowed(step, m.window):
            if m.expert_width is not None and "kernel: moe-linear," in own:
                own = own[:-1] + f", widths: {{wb: {m.expert_width}}}}}"
            out.append(
                "  - " + own.replace("{qo}", qo).replace("{d1}", bare).replace("{d}", d_text)
            )
    return out


def _memory(m: Imported) -> list[str]:
    """The memory ledger's lines: widths, weights and the KV cache."""
    embeddings = "V*h/tp" if m.tied else "V*h*ceil(2/pp)/tp"
    if m.family == "mla":
        wb = m.weight_width or m.precision
        return [
            f"  widths: {{wb: {wb}, wh: bf16, wkv: bf16}}",
            "  weights: >-",
            "    (layers/pp*(h*ql + h*(r + dr) + (ql*hq*(dn + dr) + r*hq*(dn + dv) + hq*dv*h)/tp)",
            "    + dense/pp*3*h*fd/tp + (layers - dense)/pp*(E*3*h*f/max(tp, ep) + S*3*h*f/tp))*wb",
            f"    + ((layers - dense)/pp*h*E + layers/pp*(2*h + ql + r) + {embeddings} + h)*wh",
            "  kv_per_token: layers/pp*(r + dr)*wkv",
        ]
    if m.family == "gemma":
        vision = (
            "\n    + vl*(4*vh*vh + 2*vh*vf + vf + 9*vh) + (image/patch)*(image/patch)*vh"
            " + 3*patch*patch*vh\n    + 4*vh + vh*h"
            if m.has("vl")
            else ""
        )
        return [
            "  weights: >-",
            "    (layers/pp*(2*h*hq*d + 2*h*hkv*d + 3*h*f)/tp"
            + (
                " + layers/pp*(4*h + 2*d)"
                if m.architecture.startswith("Gemma3")
                else " + layers/pp*4*h"
            )
            + " + V*h/tp + h"
            + vision
            + ")*w",
            "  kv: 2*b*(local*min(L, W) + (layers - local)*L)/pp*max(hkv/tp, 1)*d*w",
        ]
    d_text = "d" if m.has("d") else "(h/hq)"
    qo = "hq*d" if m.has("d") else "h"
    out = []
    attention = f"2*h*{qo}" if m.has("d") else "2*h*h"
    if m.family == "dense":
        layer = f"{attention} + 2*h*hkv*{d_text} + 3*h*f"
        weights = f"(layers/pp*({layer})/tp + layers/pp*2*h + {embeddings} + h)*w"
    elif m.expert_width is not None:
        layer = f"{attention} + 2*h*hkv*{d_text}"
        out.append(f"  widths: {{wb: {m.expert_width}}}")
        weights = (
            f"(layers/pp*({layer})/tp + layers/pp*(h*E + 2*h) + {embeddings} + h)*w"
            " + layers/pp*E*3*h*f/max(tp, ep)*wb"
        )
    else:
        layer = f"{attention} + 2*h*hkv*{d_text}"
        weights = (
            f"(layers/pp*({layer})/tp + layers/pp*E*3*h*f/max(tp, ep)"
            f" + layers/pp*(h*E + 2*h) + {embeddings} + h)*w"
        )
    heads = f"max(hkv/tp, 1)*{d_text}*w"
    kv = {
        "none": f"  kv_per_token: 2*layers/pp*{heads}",
        "all": f"  kv: 2*b*layers*min(L, W)/pp*{heads}",
        "mixed": f"  kv: 2*b*(local*min(L, W) + (layers - local)*L)/pp*{heads}",
    }[m.window]
    return [*out, f"  weights: {weights}", kv]


SOURCE_ID = "hf-config"


def _name(m: Imported, ident: str) -> str:
    kind = {
        "experts": "routed experts",
        "mla": "latent attention, routed experts",
        "gemma": "sliding-window and global layers, GeGLU",
    }.get(m.family) or _attention_kind(m)
    return f"{ident} ({kind}, {m.value('layers')} layers)"


def _attention_kind(m: Imported) -> str:
    hq, hkv = m.value("hq"), m.value("hkv")
    if hkv == hq:
        return "multi-head attention"
    return "multi-query attention" if hkv == 1 else "grouped-query attention"


def _description(m: Imported, ident: str) -> str:
    if m.family == "mla":
        return _latent_description(m, ident)
    if m.family == "gemma":
        return _gemma_description(m, ident)
    head = m.value("d") if m.has("d") else m.value("h") // m.value("hq")
    parts = [
        f"{ident}, imported from its config.json ({m.architecture}): {m.value('layers')} decoder"
        f" layers of hidden size {m.value('h')} with {m.value('hq')} query heads and"
        f" {m.value('hkv')} key-value heads of size {head} ({_attention_kind(m)}),",
    ]
    if m.family == "experts":
        parts.append(
            f"and in place of one MLP, {m.value('E')} expert MLPs (gated SwiGLU, intermediate"
            f" size {m.value('f')}) of which a router picks {m.value('k')} per token;"
        )
    else:
        parts.append(f"a gated SwiGLU MLP of intermediate size {m.value('f')};")
    ties = "tied" if m.tied else "untied"
    parts.append(
        f"RMSNorm, and a {m.value('V')}-token vocabulary with {ties} input and output embeddings."
    )
    if m.window == "all":
        parts.append(f"Every layer attends over a sliding window of {m.value('W')} keys.")
    elif m.window == "mixed":
        parts.append(
            f"{m.value('local')} of the layers attend over a sliding window of"
            f" {m.value('W')} keys, the others over every key."
        )
    if m.expert_width is not None:
        parts.append(f"The experts' weights are stored in {m.expert_width.upper()}.")
    return " ".join(parts)


def _gemma_description(m: Imported, ident: str) -> str:
    v = m.value
    gemma3 = m.architecture.startswith("Gemma3")
    owner = "Gemma3TextConfig" if gemma3 else "Gemma2Config"
    heads = ", and on each head's queries and keys" if gemma3 else ""
    text = (
        f"{ident}, imported from its config.json ({m.architecture}) and the defaults of"
        f" transformers' {owner}: {v('layers')} decoder layers of hidden size {v('h')}"
        f" with {v('hq')} query heads of {v('d')} sharing {v('hkv')} key-value heads,"
        f" {v('layers') - v('local')} layers attending over every key and the other"
        f" {v('local')} over a sliding window of {v('W')}; a GeGLU MLP (tanh-approximated"
        f" GELU) of intermediate size {v('f')}; RMSNorm before and after both attention and"
        f" the MLP{heads}; a {v('V')}-token vocabulary with tied input and output embeddings."
    )
    if m.has("vl"):
        text += (
            f" The SigLIP vision tower ({v('vl')} layers of {v('vh')}) and its projection are"
            " held in memory and not run: the phases are text."
        )
    return text


def _latent_description(m: Imported, ident: str) -> str:
    v = m.value
    text = (
        f"{ident}, imported from its config.json ({m.architecture}): {v('layers')} decoder"
        f" layers of hidden size {v('h')} with multi-head latent attention ({v('hq')} heads;"
        f" queries through a {v('ql')}-wide low-rank projection, keys and values cached as"
        f" one latent of {v('r')} values and a {v('dr')}-value rotary key per token, shared by"
        f" all heads), the first {v('dense')} layers with a dense SwiGLU MLP (intermediate size"
        f" {v('fd')}) and the others with {v('E')} routed experts (intermediate size {v('f')})"
        f" of which a router picks {v('k')} per token, beside {v('S')} shared; RMSNorm, and a"
        f" {v('V')}-token vocabulary with untied input and output embeddings."
    )
    if m.weight_width is not None:
        text += (
            " The linear layers' weights are FP8 with a 32-bit scale per 128 x 128 block;"
            " the embeddings, router and norms at BF16."
        )
    return text


# The attention step of a template, and what stands for it in a windowed model.
_CAUSAL = "{id: attention, name: Causal attention over the KV cache, kernel: attention-kv-causal,"
_WINDOW_SHAPE = '{b: b, s: s, L: L, W: W, hq: hq/tp, hkv: "max(hkv/tp, 1)", d: {d1}}'
_CAUSAL_SHAPE = '{b: b, s: s, L: L, hq: hq/tp, hkv: "max(hkv/tp, 1)", d: {d1}}'


def _windowed(step: str, window: str) -> list[str]:
    """A template's step as a model with sliding-window layers runs it: the attention
    step over the window in every layer ("all"), or a windowed step for the `local`
    layers and a causal one for the rest ("mixed")."""
    if window == "none" or not step.startswith(_CAUSAL):
        return [step]
    local = (
        "{id: attention-local, name: Attention over the sliding window (the sliding layers),"
        f" kernel: attention-kv-window, shape: {_WINDOW_SHAPE}, count: "
    )
    if window == "all":
        return [
            "{id: attention, name: Attention over the sliding window of the KV cache,"
            f" kernel: attention-kv-window, shape: {_WINDOW_SHAPE}, count: layers}}"
        ]
    return [
        local + "local}",
        "{id: attention-full, name: Causal attention over the whole KV cache (the full"
        f" layers), kernel: attention-kv-causal, shape: {_CAUSAL_SHAPE}, count: layers - local}}",
    ]


def _phases(context: int | None) -> list[str]:
    """The default phases: a 2,048-token prefill and decode steps, within the context."""
    top = context if context is not None else 8192
    out = []
    if top >= 2048:
        out += ["prefill-s2048: {b: 1, s: 2048, L: 2048}", "decode-b1-l2048: {b: 1, s: 1, L: 2048}"]
    else:
        out += [
            f"prefill-s{top}: {{b: 1, s: {top}, L: {top}}}",
            f"decode-b1-l{top}: {{b: 1, s: 1, L: {top}}}",
        ]
    if top >= 8192:
        out.append("decode-b1-l8192: {b: 1, s: 1, L: 8192}")
    if top >= 4096:
        out.append("decode-b32-l4096: {b: 32, s: 1, L: 4096}")
    return out


def _config_name(url: str, ident: str) -> str:
    """The repository a huggingface.co address names (ORG/NAME), else the model's id."""
    match = re.match(r"https://huggingface\.co/([^/]+/[^/]+)", url)
    return match.group(1) if match else ident


def _publisher(url: str) -> str:
    """Who publishes the file at `url`: an organisation on Hugging Face, a repository on
    GitHub (a copy of the config kept there), else the host."""
    match = re.match(r"https://huggingface\.co/([^/]+)/", url)
    if match:
        return f"{match.group(1)} on Hugging Face"
    match = re.match(r"https://github\.com/([^/]+/[^/]+)/", url)
    if match:
        return f"{match.group(1)} on GitHub"
    return url.split("/")[2]


def _kind(url: str) -> str:
    """`vendor` for the model's own repository on Hugging Face, else `third-party` (a copy
    kept elsewhere)."""
    return "vendor" if url.startswith("https://huggingface.co/") else "third-party"


def _source_note(m: Imported, url: str) -> str:
    quoted = "', '".join(p.quoted for p in m.parameters)
    if m.weight_width is not None:
        flags = ['"quant_method": "fp8", "weight_block_size": [128, 128]']
    elif m.precision_key == "quantization_config":
        flags = [f'"quant_method": "{m.expert_width}"']
    else:
        flags = [f'"{m.precision_key}": "{_dtype_of(m.precision)}"']
    flags.append(f'"tie_word_embeddings": {"true" if m.tied else "false"}')
    where = "" if _kind(url) == "vendor" else f", as kept by {_publisher(url)}"
    return (
        f"The published configuration ({m.architecture}){where}, read by rooflinec import"
        f" hf-config: '{quoted}', '{flags[0]}' and '{flags[1]}'."
    )


def _dtype_of(precision: str) -> str:
    return next(k for k, v in PRECISIONS.items() if v == precision)


def _assumptions(m: Imported) -> list[str]:
    """The template's assumptions that apply: tagged `all`, `experts` or `tied`."""
    tags = {"all", m.family, *(["tied"] if m.tied else [])}
    if m.family not in ("mla", "gemma"):
        tags.add("gqa")
        tags.add("full" if m.window == "none" else f"window-{m.window}")
    if m.has("vl"):
        tags.add("vision")
    if m.family == "gemma":
        tags.add("gemma2" if m.architecture.startswith("Gemma2") else "gemma3")
    for width in (m.expert_width, m.weight_width):
        if width is not None:
            tags.add(width)
    out = []
    for line in _template("assumptions.txt"):
        tag, _, text = line.partition(": ")
        if tag in tags:
            out.append(text.replace("{d}", "d" if m.has("d") else "h/hq"))
    return out + list(m.notes)


_TEMPLATES = Path(__file__).with_name("hf_templates")


def _template(name: str) -> list[str]:
    """The lines of a template file: a step per line, or tagged assumptions."""
    text = (_TEMPLATES / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _quote(text: str) -> str:
    """A YAML double-quoted scalar."""
    return json.dumps(text, ensure_ascii=False)


def _wrap(text: str, width: int = 84) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*out, line] if line else out


# ------------------------------------------------------------------------------ checking


def checked_spec(folder: Path, ident: str, text: str) -> str | None:
    """The first error of the catalog in `folder` with `text` as `models/ID.yaml` (built
    in a temporary copy, `write.verify`: nothing in `folder` is touched), or None."""
    from rooflinec.errors import SpecError
    from rooflinec.importing.write import verify

    spec = folder / "models" / f"{ident}.yaml"
    try:
        verify(folder, {spec: text})
    except SpecError as exc:
        for d in exc.diagnostics:
            where = "the spec" if Path(d.location.file) == spec else d.location.file
            return f"{where}, line {d.location.line}: {d.message}"
        return "it does not build"
    return None


def write_spec(target: Path, text: str) -> None:
    """`text` as the new file `target`, whole or not at all: written beside it and linked
    in, which fails (FileExistsError) if a file of that name appeared meanwhile."""
    import os
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.link(temporary, target)
    finally:
        os.unlink(temporary)
