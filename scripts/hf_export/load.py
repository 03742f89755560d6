"""Loading the model and the tokenizer to export, from a directory or the hub."""

from __future__ import annotations

from typing import Any

from hf_export import ExportError, Log, stderr

TASKS = ("causal-lm", "hidden-states")
DTYPES = ("float32",)


def check_task(task: str) -> None:
    if task not in TASKS:
        raise ExportError(f"unknown task '{task}', expected one of {', '.join(TASKS)}")


def _torch_dtype(dtype: str) -> Any:
    import torch

    if dtype not in DTYPES:
        raise ExportError(f"unsupported dtype '{dtype}', expected one of {', '.join(DTYPES)}")
    return getattr(torch, dtype)


def load_model(name_or_dir: str, task: str, dtype: str = "float32", log: Log = stderr,
               attn: str = "sdpa") -> Any:
    """Load a model for ``task`` with ``attn`` attention (falling back to the model's default).

    ``sdpa`` (PyTorch's fused scaled-dot-product attention, transformers' default) traces into a
    graph that DJL's libtorch runs about a quarter faster than ``eager``; both are checked the
    same way after tracing.

    ``causal-lm`` uses ``AutoModelForCausalLM``, ``hidden-states`` uses ``AutoModel``. Hub names
    work where the hub can be reached; a local directory always works.
    """
    check_task(task)
    torch_dtype = _torch_dtype(dtype)
    from transformers import AutoModel, AutoModelForCausalLM

    model_class = AutoModelForCausalLM if task == "causal-lm" else AutoModel
    try:
        try:
            model = model_class.from_pretrained(
                name_or_dir, dtype=torch_dtype, attn_implementation=attn
            )
        except (ValueError, TypeError, NotImplementedError) as e:
            if "attn" not in str(e).lower() and attn not in str(e).lower():
                raise
            log(f"note: {attn} attention is not available for '{name_or_dir}' ({e}); "
                "using the model's default attention")
            model = model_class.from_pretrained(name_or_dir, dtype=torch_dtype)
    except (OSError, ValueError, KeyError) as e:
        raise ExportError(
            f"cannot load model '{name_or_dir}' with {model_class.__name__} for task '{task}': {e}"
        ) from e
    return model


def load_tokenizer(name_or_dir: str) -> Any:
    """Load the tokenizer that belongs to ``name_or_dir`` with ``AutoTokenizer``."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(name_or_dir)
    except (OSError, ValueError, KeyError) as e:
        raise ExportError(f"cannot load a tokenizer for '{name_or_dir}': {e}") from e
