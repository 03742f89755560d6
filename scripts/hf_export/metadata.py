"""What ``tensorcache-model.json`` records: the model, its token ids, the files and dimensions of
a split export, and the digests a trainer checks its own model and tokenizer against."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from hf_export import BODY_FILE, FORMAT_VERSION, HEAD_FILE, SPLIT_FORMAT_VERSION
from hf_export.trace import first_attr, text_config

try:
    from tensorcache import digests
except ImportError:  # run from a checkout: the package lies beside scripts/
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    for _name in [m for m in sys.modules if m == "tensorcache" or m.startswith("tensorcache.")]:
        del sys.modules[_name]
    from tensorcache import digests


def token_id(tokenizer: Any, name: str) -> Optional[int]:
    value = getattr(tokenizer, name, None)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def build_metadata(model: Any, tokenizer: Any, task: str, source: str, last_dim: int) -> Dict[str, Any]:
    """The content of ``tensorcache-model.json`` for ``model`` and ``tokenizer``."""
    import torch
    import transformers

    config = text_config(model)
    architectures = getattr(model.config, "architectures", None) or []
    hidden = first_attr(config, ("hidden_size", "n_embd", "d_model", "dim"))
    vocab = first_attr(config, ("vocab_size",))
    eos = getattr(tokenizer, "eos_token", None)
    return {
        "format_version": FORMAT_VERSION,
        "task": task,
        "architecture": architectures[0] if architectures else type(model).__name__,
        "attn_implementation": getattr(model.config, "_attn_implementation", None),
        "source": source,
        "vocab_size": vocab if vocab is not None else (last_dim if task == "causal-lm" else None),
        "tokenizer_vocab_size": len(tokenizer),
        "hidden_size": hidden if hidden is not None else (last_dim if task == "hidden-states" else None),
        "max_positions": first_attr(config, ("max_position_embeddings", "n_positions")),
        "pad_token_id": token_id(tokenizer, "pad_token_id"),
        "bos_token_id": token_id(tokenizer, "bos_token_id"),
        "eos_token_id": token_id(tokenizer, "eos_token_id"),
        "eos_token": str(eos) if eos is not None else None,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "dtype": "float32",
    }


def input_digests(model: Any, tokenizer: Any) -> Dict[str, Optional[str]]:
    """The digests ``tensorcache-model.json`` records for a trainer to check its own model and
    tokenizer against (``tensorcache.digests``): the model's state, the tokenizer's full state
    and its chat template (None without one)."""
    return {
        "model_state_sha256": digests.state_digest(model),
        "tokenizer_state_sha256": digests.tokenizer_digest(tokenizer),
        "chat_template_sha256": digests.chat_template_digest(tokenizer),
    }


def build_split_metadata(model: Any, tokenizer: Any, source: str, hidden_size: int, vocab: int,
                         postprocess: Sequence[Tuple[str, float]]) -> Dict[str, Any]:
    """The content of ``tensorcache-model.json`` for a split (format 2) causal-lm export.

    Everything format 1 records, plus the files and the dimensions needed to estimate memory:
    ``vocab_size`` is the width of the head's output and ``hidden_size`` that of the body's.
    """
    v1 = build_metadata(model, tokenizer, "causal-lm", source, vocab)
    config = text_config(model)
    heads = first_attr(config, ("num_attention_heads", "n_head", "num_heads"))
    kv_heads = first_attr(config, ("num_key_value_heads", "num_kv_heads", "n_head_kv",
                                    "multi_query_group_num"))
    layers = first_attr(config, ("num_hidden_layers", "n_layer", "num_layers"))
    intermediate = first_attr(config, ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"))
    if intermediate is None and hasattr(config, "n_inner"):
        intermediate = 4 * hidden_size  # GPT-2 style configs: n_inner None means 4 * hidden
    head_dim = first_attr(config, ("head_dim",))
    if head_dim is None and heads:
        head_dim = hidden_size // heads
    out: Dict[str, Any] = {
        "format_version": SPLIT_FORMAT_VERSION,
        "task": "causal-lm",
        "files": {"body": BODY_FILE, "head": HEAD_FILE},
    }
    for key, value in v1.items():
        if key in ("format_version", "task"):
            continue
        out[key] = value
        if key == "vocab_size":
            out[key] = vocab
        elif key == "hidden_size":
            out[key] = hidden_size
            out["num_hidden_layers"] = layers
            out["num_attention_heads"] = heads
            out["num_key_value_heads"] = kv_heads if kv_heads is not None else heads
            out["head_dim"] = head_dim
            out["intermediate_size"] = intermediate
        elif key == "eos_token":
            out["head_postprocess"] = [{"op": op, "value": value} for op, value in postprocess]
    return out

