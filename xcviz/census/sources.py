"""A census's sources: files, folders, `timm:PATTERN` and `hf:ARCH` expanded into tasks, and each library model built."""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from ..errors import XcvizError
from .libraries import EXTRA_HINT, LibraryUnavailable, import_failure, load

FILE_SUFFIXES = (".onnx", ".yaml", ".yml", ".json", ".xcir", ".pt2", ".pb", ".pbtxt")
LIBRARIES = ("timm", "hf")
META_PARAMS = 30_000_000   # timm models above this many parameters stay on the meta device (no 4 GB of random init)
SEQ = 16                   # tokens in a text model's example input


@dataclass(frozen=True, order=True)
class Task:
    """One model of a census: `source` as the user wrote it, `model` its name within (the key of a row),
    `kind` file | timm | hf and `ref` the path, timm name or transformers model type. `unavailable`: why the
    source's library does not import (its one row fails with that line, at stage "import"; the others run)."""

    source: str
    model: str
    kind: str
    ref: str
    unavailable: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.source, self.model)


def expand(sources: list[str]) -> list[Task]:
    """Every task the sources name, in a fixed order (sources as given, models sorted within each); a
    model named twice is kept once."""
    tasks: list[Task] = []
    for s in sources:
        lib, sep, pattern = s.partition(":")
        if sep and lib in LIBRARIES and not os.path.exists(s):
            if not pattern:
                raise XcvizError(f"{lib}: needs a pattern", where=s, hint=f"write {lib}:resnet*" if lib == "timm" else "write hf:llama")
            try:
                names = timm_names(pattern) if lib == "timm" else hf_names(pattern)
            except LibraryUnavailable as e:   # this source's row fails; the other sources run
                tasks.append(Task(s, pattern, lib, pattern, unavailable=str(e)))
                continue
            if not names:
                raise XcvizError(f"no {'timm model' if lib == 'timm' else 'transformers model type'} matches {pattern!r}", where=s,
                                 hint="patterns use shell wildcards: timm:resnet*, hf:*bert*")
            tasks += [Task(s, n, lib, n) for n in names]
        else:
            tasks += [Task(s, label, "file", path) for path, label in file_paths(s)]
    seen: set[tuple[str, str]] = set()
    out = []
    for t in tasks:
        if t.key not in seen:
            seen.add(t.key)
            out.append(t)
    return out


def file_paths(p: str) -> list[tuple[str, str]]:
    """(path, name) of a file, or of each graph file under a folder (sorted walk; names relative to it)."""
    if os.path.isdir(p):
        found = []
        for folder, dirs, files in os.walk(p):
            dirs.sort()
            found += [(os.path.join(folder, f), os.path.relpath(os.path.join(folder, f), p))
                      for f in sorted(files) if f.lower().endswith(FILE_SUFFIXES)]
        if not found:
            raise XcvizError("no graph files in this folder", where=p, hint="a census reads " + ", ".join(FILE_SUFFIXES))
        return found
    if os.path.exists(p):
        return [(p, os.path.basename(p))]
    lib = p.partition(":")[0]
    hint = f"libraries are named {', '.join(x + ':PATTERN' for x in LIBRARIES)}" if ":" in p and lib not in LIBRARIES else None
    raise XcvizError("no such file or folder", where=p, hint=hint)


def timm_names(pattern: str) -> list[str]:
    return sorted(load("timm").list_models(pattern))


def hf_model_types() -> list[str]:
    """The transformers model types AutoModel builds (a config alone is not a model)."""
    load("transformers")
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return sorted(MODEL_MAPPING_NAMES)


def hf_names(pattern: str) -> list[str]:
    return [t for t in hf_model_types() if fnmatch.fnmatchcase(t, pattern)]


# ---- building one library model (in the worker) -----------------------------------------------------------
def build_timm(name: str):
    """(module, example args, kwargs, weights, config) for a timm model, random-initialised from timm's own config.

    Built on the meta device first; small models are built again with real random weights (what
    --validate runs), big ones stay on meta (shapes only: the analysis needs no values)."""
    import torch

    timm = load("timm")
    with torch.device("meta"):
        model = timm.create_model(name, pretrained=False)
    weights = "meta"
    if sum(p.numel() for p in model.parameters()) <= META_PARAMS:
        torch.manual_seed(0)
        model = timm.create_model(name, pretrained=False)
        weights = "random"
    cfg = getattr(model, "pretrained_cfg", None) or getattr(model, "default_cfg", None) or {}
    shape = tuple(cfg.get("input_size") or (3, 224, 224))
    device = "meta" if weights == "meta" else "cpu"
    torch.manual_seed(0)
    x = torch.randn((1, *shape), device=device) if device == "cpu" else torch.empty((1, *shape), device="meta")
    return model.eval(), (x,), {}, weights, "default"


# sizes a transformers config is shrunk to (every attribute the config has among these names)
HF_LAYERS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
             "num_encoder_layers", "num_decoder_layers", "depth")
HF_SIZES = {"hidden_size": 64, "d_model": 64, "n_embd": 64, "dim": 64, "embed_dim": 64, "intermediate_size": 128,
            "ffn_dim": 128, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "d_ff": 128, "n_inner": 128,
            "hidden_dim": 128, "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "encoder_attention_heads": 4,
            "decoder_attention_heads": 4, "num_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "d_kv": 16,
            "vocab_size": 1024, "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4,
            "moe_intermediate_size": 64, "num_experts_per_tok": 2, "kv_lora_rank": 16, "q_lora_rank": 32,
            "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16, "rotary_dim": 8}


def shrink(config, depth: int = 0, widths: bool = True) -> None:
    """Few layers and (with `widths`) small widths, in place, and in every sub-config (a multimodal model's text
    and vision parts): the architecture is kept, its size is not (a 7B config would allocate 28 GB). A config
    that refuses a value (Funnel's num_hidden_layers) raises: build_hf then tries the next candidate."""
    from transformers import PretrainedConfig

    for k in HF_LAYERS:
        if isinstance(getattr(config, k, None), int) and not isinstance(getattr(config, k), bool):
            setattr(config, k, min(getattr(config, k), 2))
    for k, v in HF_SIZES.items() if widths else ():
        if k == "hidden_size" and isinstance(getattr(config, "hidden_sizes", None), list):
            continue   # a staged model (ConvNeXt, ResNet) derives it from hidden_sizes: the two must agree
        old = getattr(config, k, None)
        if isinstance(old, int) and not isinstance(old, bool) and old > v:
            setattr(config, k, v)
    vocab = getattr(config, "vocab_size", None)
    for k in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id"):
        v = getattr(config, k, None)  # a token id past the shrunk vocabulary would fail the embedding
        if isinstance(vocab, int) and isinstance(v, int) and v >= vocab:
            setattr(config, k, vocab - 1)
    quiet(config)
    if depth < 2:
        for k in sorted(vars(config)):
            v = getattr(config, k)
            if isinstance(v, PretrainedConfig):
                shrink(v, depth + 1, widths)


def quiet(config) -> None:
    """No cache, attentions or hidden states among the outputs: the model's main computation alone."""
    for k in ("use_cache", "output_attentions", "output_hidden_states"):
        if hasattr(config, k):
            setattr(config, k, False)


# the configs build_hf tries, in order: shrunk, layers shrunk (widths as the library sets them), the library's
# own default (when it is small enough to build with real weights)
HF_CONFIGS = ("shrunk", "layers shrunk", "default")
HF_DEFAULT_PARAMS = 400_000_000


def build_hf(model_type: str):
    """(module, args, kwargs, weights, config): transformers' config for the type, randomly initialised by
    AutoModel.from_config (nothing is downloaded), with example inputs for its main input. The config is the
    first of HF_CONFIGS whose model builds and runs its example inputs eagerly, so that a config the shrinking
    broke (ConvNeXt's stages, Swin's windows, Reformer's axial embeddings, Funnel's blocks) is never blamed on
    torch.export; when none does, the default config's failure is the error (stage create)."""
    import copy

    import torch

    transformers = load("transformers")
    default = transformers.AutoConfig.for_model(model_type)
    failures: list[str] = []
    for how in HF_CONFIGS:
        config = copy.deepcopy(default)
        try:
            if how == "default":
                quiet(config)
                with torch.device("meta"):
                    size = sum(p.numel() for p in transformers.AutoModel.from_config(config).parameters())
                if size > HF_DEFAULT_PARAMS:
                    failures.append(f"default: {size / 1e6:.0f} M parameters, too many to build with weights")
                    continue
            else:
                shrink(config, widths=how == "shrunk")
            torch.manual_seed(0)
            model = transformers.AutoModel.from_config(config).eval()
            kwargs = hf_inputs(model, config)
            with torch.no_grad():
                model(**kwargs)
        except XcvizError:
            raise
        except Exception as e:  # noqa: BLE001 - a config this architecture does not accept: the next one
            if import_failure(e, "transformers"):
                raise LibraryUnavailable(import_failure(e, "transformers")) from None
            failures.append(f"{how}: {type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:160]}")
            continue
        return model, (), kwargs, "random", how
    raise XcvizError(f"no config of {model_type} builds and runs ({'; '.join(failures)})"[:400])


def hf_inputs(model, config) -> dict:
    import torch

    torch.manual_seed(0)
    main = getattr(model, "main_input_name", "input_ids")
    text = getattr(config, "text_config", None) or config
    vision = getattr(config, "vision_config", None) or config
    if main == "input_ids":
        vocab = int(getattr(text, "vocab_size", None) or 1024)
        return {"input_ids": torch.randint(0, min(vocab, 1024), (1, SEQ))} | _decoder(config)
    return _main_input(main, config, vision) | _decoder(config)


def _decoder(config) -> dict:
    """An encoder-decoder model also takes the decoder's tokens."""
    import torch

    if not getattr(config, "is_encoder_decoder", False):
        return {}
    text = getattr(config, "text_config", None) or config
    vocab = int(getattr(text, "vocab_size", None) or 1024)
    return {"decoder_input_ids": torch.randint(0, min(vocab, 1024), (1, SEQ))}


def _main_input(main: str, config, vision) -> dict:
    import torch

    if main == "pixel_values":
        size = getattr(vision, "image_size", None) or 224
        size = size if isinstance(size, int) else int(size[0]) if isinstance(size, (list, tuple)) else 224
        return {"pixel_values": torch.randn(1, int(getattr(vision, "num_channels", 3) or 3), size, size)}
    if main == "input_values":
        return {"input_values": torch.randn(1, 16000)}
    if main == "input_features":
        bins = int(getattr(config, "num_mel_bins", None) or getattr(config, "feature_size", None) or 80)
        frames = 2 * int(getattr(config, "max_source_positions", None) or 1500)
        return {"input_features": torch.randn(1, bins, frames)}
    raise XcvizError(f"no example input for main input {main!r}", hint="the census builds input_ids, pixel_values, "
                     "input_values or input_features")
