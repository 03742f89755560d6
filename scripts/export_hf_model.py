#!/usr/bin/env python3
"""Export a Hugging Face model to a TorchScript model directory that TensorCache can load.

The exported directory holds:

* ``model.pt``: a traced module ``forward(input_ids, attention_mask)`` taking int64 ``[B, T]``
  tensors, right-padded, and returning float32 ``[B, T, V]`` logits (task ``causal-lm``) or
  ``[B, T, H]`` last hidden states (task ``hidden-states``);
* ``tokenizer.json``, ``tokenizer_config.json`` and ``chat_template.jinja`` (when the tokenizer
  has a chat template), written by ``tokenizer.save_pretrained``;
* ``tensorcache-model.json``: what the model is and which token ids it uses.

Before anything is written the saved ``model.pt`` is reloaded and checked against the eager
model: other batch sizes and lengths must give the same outputs at non-pad positions, and the
attention mask must still change the output (a graph that ignores the mask would silently give
wrong values for padded batches). All files are written to a temporary directory beside the
target and renamed into place at the end, so a failed export leaves nothing behind.

Only right padding is supported: position ids are derived from token positions, not from the
mask.

Example::

    python scripts/export_hf_model.py --model gpt2 --out models/gpt2
    python scripts/export_hf_model.py --model ./my-encoder --out models/enc --task hidden-states

The function :func:`export` can be imported to export an already loaded model.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

FORMAT_VERSION = 1
TASKS = ("causal-lm", "hidden-states")
DTYPES = ("float32",)
MODEL_FILE = "model.pt"
TOKENIZER_FILE = "tokenizer.json"
METADATA_FILE = "tensorcache-model.json"
DEFAULT_MAX_CHECK_LENGTH = 64
# Traced outputs must match the eager model within this fraction of the largest |value|.
RELATIVE_TOLERANCE = 1e-4

Log = Callable[[str], None]


class ExportError(Exception):
    """A problem with the arguments or the model that the user has to fix; exit code 2."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ExportError(f"unknown task '{task}', expected one of {', '.join(TASKS)}")


def _torch_dtype(dtype: str) -> Any:
    import torch

    if dtype not in DTYPES:
        raise ExportError(f"unsupported dtype '{dtype}', expected one of {', '.join(DTYPES)}")
    return getattr(torch, dtype)


def load_model(name_or_dir: str, task: str, dtype: str = "float32", log: Log = _stderr,
               attn: str = "sdpa") -> Any:
    """Load a model for ``task`` with ``attn`` attention (falling back to the model's default).

    ``sdpa`` (PyTorch's fused scaled-dot-product attention, transformers' default) traces into a
    graph that DJL's libtorch runs about a quarter faster than ``eager``; both are checked the
    same way after tracing.

    ``causal-lm`` uses ``AutoModelForCausalLM``, ``hidden-states`` uses ``AutoModel``. Hub names
    work where the hub can be reached; a local directory always works.
    """
    _check_task(task)
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


# --------------------------------------------------------------------------------------------
# The traced module
# --------------------------------------------------------------------------------------------


def _wrap(model: Any, task: str) -> Any:
    """An ``nn.Module`` with ``forward(input_ids, attention_mask) -> Tensor`` around ``model``."""
    import torch

    class CausalLmLogits(torch.nn.Module):
        """Logits ``[B, T, V]`` of a causal language model, no key/value cache."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                return_dict=True,
            )
            return out.logits

    class LastHiddenState(torch.nn.Module):
        """Last hidden states ``[B, T, H]`` of an encoder or decoder backbone."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
            return out.last_hidden_state

    wrapper = CausalLmLogits(model) if task == "causal-lm" else LastHiddenState(model)
    return wrapper.eval()


def _text_config(model: Any) -> Any:
    config = model.config
    getter = getattr(config, "get_text_config", None)
    return getter() if callable(getter) else config


def _first_attr(obj: Any, names: Sequence[str]) -> Optional[int]:
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _right_padded(rows: List[List[int]], pad_id: int) -> Tuple[Any, Any]:
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def _random_rows(lengths: Sequence[int], id_limit: int, seed: int) -> List[List[int]]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(0, id_limit, (n,), generator=generator).tolist() for n in lengths]


def _check_output(out: Any, batch: int, length: int, last_dim: Optional[int], task: str,
                  what: str) -> None:
    import torch

    kind = "logits [B, T, V]" if task == "causal-lm" else "hidden states [B, T, H]"
    if not isinstance(out, torch.Tensor):
        raise ExportError(f"{what} returned {type(out).__name__}, expected a float tensor of {kind}")
    if not out.is_floating_point():
        raise ExportError(f"{what} returned dtype {out.dtype}, expected a float tensor of {kind}")
    if out.dim() != 3 or out.shape[0] != batch or out.shape[1] != length:
        raise ExportError(
            f"{what} returned shape {list(out.shape)} for input [{batch}, {length}], expected {kind}"
        )
    if last_dim is not None and out.shape[2] != last_dim:
        size = "vocabulary size" if task == "causal-lm" else "hidden size"
        raise ExportError(
            f"{what} returned last dimension {out.shape[2]}, but the model's {size} is {last_dim}"
        )


def _max_diff_at(a: Any, b: Any, mask: Any) -> Tuple[float, float]:
    """Largest |a - b| and largest |b| over positions where ``mask`` is 1."""
    keep = mask.bool()
    diff = (a.double() - b.double())[keep].abs()
    ref = b.double()[keep].abs()
    return float(diff.max()) if diff.numel() else 0.0, float(ref.max()) if ref.numel() else 0.0


def _verify_traced(traced: Any, wrapper: Any, task: str, last_dim: Optional[int], id_limit: int,
                   pad_id: int, max_len: int, log: Log) -> None:
    """Check a reloaded traced module against the eager wrapper; raise ExportError if it differs."""
    import torch

    long_len = max(3, max_len)
    shapes = [
        [long_len],                      # batch 1, no padding
        [5, max(2, long_len // 2), 2],   # batch 3, right-padded
        [1, 3, 9, 6, 13],                # batch 5
    ]
    shapes = [[min(n, long_len) for n in lengths] for lengths in shapes]
    with torch.no_grad():
        for n, lengths in enumerate(shapes):
            rows = _random_rows(lengths, id_limit, seed=100 + n)
            ids, mask = _right_padded(rows, pad_id)
            got = traced(ids, mask)
            _check_output(got, ids.shape[0], ids.shape[1], last_dim, task,
                          f"the traced model (batch {list(ids.shape)})")
            # reference: the eager model, one row at a time without padding
            ref = torch.zeros_like(got)
            for i, row in enumerate(rows):
                one = torch.tensor([row], dtype=torch.long)
                ref[i, : len(row)] = wrapper(one, torch.ones_like(one))[0]
            diff, scale = _max_diff_at(got, ref, mask)
            if not diff <= RELATIVE_TOLERANCE * max(1.0, scale):
                raise ExportError(
                    f"the traced model differs from the eager model on a right-padded batch of "
                    f"lengths {lengths}: max |difference| {diff:.3g} at non-pad positions (largest "
                    f"|value| {scale:.3g}); it cannot be used with other shapes or with padding"
                )
            log(f"check: batch {list(ids.shape)} lengths {lengths}: max |traced - eager| = {diff:.2e}")

        # The attention mask must be live: hide a middle token of one row.
        rows = _random_rows([max(4, min(long_len, 12)), 3], id_limit, seed=200)
        ids, mask = _right_padded(rows, pad_id)
        hole = mask.clone()
        hidden_pos = len(rows[0]) // 2
        hole[0, hidden_pos] = 0
        full_out = traced(ids, mask)
        hole_out = traced(ids, hole)
        eager_hole = wrapper(ids, hole)
        change, scale = _max_diff_at(hole_out, full_out, hole)
        if not change > 1e-6 * max(1.0, scale):
            raise ExportError(
                "the traced model ignores attention_mask: hiding a token did not change any "
                "output; nothing usable was written (try a model whose attention works in eager "
                "mode)"
            )
        diff, scale = _max_diff_at(hole_out, eager_hole, hole)
        if not diff <= RELATIVE_TOLERANCE * max(1.0, scale):
            raise ExportError(
                f"the traced model applies attention_mask differently from the eager model (max "
                f"|difference| {diff:.3g} with a masked middle token); nothing usable was written"
            )
        log(f"check: attention mask is live (hiding token {hidden_pos} changes outputs by up to "
            f"{change:.3g}; traced vs eager {diff:.2e})")


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------


def _prepare_target(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"--out '{out_dir}' exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise ExportError(f"--out '{out_dir}' exists and is not empty (pass --overwrite to replace it)")


def make_temp_dir(parent: Path, name: str) -> Path:
    """A new hidden directory in ``parent`` with the permissions a plain mkdir would give."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    return tmp


def move_into_place(tmp: Path, out_dir: Path) -> None:
    """Rename the finished temporary directory to ``out_dir``, replacing an old one."""
    old: Optional[Path] = None
    if out_dir.is_dir() and any(out_dir.iterdir()):
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        os.rename(out_dir, old / out_dir.name)
    elif out_dir.is_dir():
        out_dir.rmdir()
    os.rename(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _token_id(tokenizer: Any, name: str) -> Optional[int]:
    value = getattr(tokenizer, name, None)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def build_metadata(model: Any, tokenizer: Any, task: str, source: str, last_dim: int) -> Dict[str, Any]:
    """The content of ``tensorcache-model.json`` for ``model`` and ``tokenizer``."""
    import torch
    import transformers

    config = _text_config(model)
    architectures = getattr(model.config, "architectures", None) or []
    hidden = _first_attr(config, ("hidden_size", "n_embd", "d_model", "dim"))
    vocab = _first_attr(config, ("vocab_size",))
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
        "max_positions": _first_attr(config, ("max_position_embeddings", "n_positions")),
        "pad_token_id": _token_id(tokenizer, "pad_token_id"),
        "bos_token_id": _token_id(tokenizer, "bos_token_id"),
        "eos_token_id": _token_id(tokenizer, "eos_token_id"),
        "eos_token": str(eos) if eos is not None else None,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "dtype": "float32",
    }


def export(model: Any, tokenizer: Any, out_dir: "str | os.PathLike[str]", task: str, source: str,
           *, max_check_length: int = DEFAULT_MAX_CHECK_LENGTH, overwrite: bool = False,
           log: Log = _stderr) -> Path:
    """Trace ``model``, check the saved file, and write a TensorCache model directory.

    Args:
        model: a loaded transformers model (causal LM for ``causal-lm``, any model with a
            ``last_hidden_state`` for ``hidden-states``); it is put in eval mode and float32.
        tokenizer: its fast tokenizer; saved with ``save_pretrained``.
        out_dir: the directory to create; its parent is created if missing.
        task: ``causal-lm`` or ``hidden-states``.
        source: where the model came from, recorded in ``tensorcache-model.json``.
        max_check_length: the longest sequence used to check the traced model.
        overwrite: replace an existing non-empty ``out_dir``.
        log: receives progress lines.

    Returns:
        The path of the finished directory.

    Raises:
        ExportError: the model or tokenizer cannot be exported as asked; nothing is written.
    """
    import torch

    _check_task(task)
    if max_check_length < 3:
        raise ExportError(f"--max-check-length {max_check_length} is too small, expected at least 3")
    out_dir = Path(out_dir).absolute()
    _prepare_target(out_dir, overwrite)
    if getattr(model.config, "is_encoder_decoder", False):
        raise ExportError(f"'{source}' is an encoder-decoder model; only decoder-only language "
                          "models and encoders taking (input_ids, attention_mask) are supported")

    if getattr(tokenizer, "is_fast", True) is False:
        raise ExportError(f"the tokenizer of '{source}' ({type(tokenizer).__name__}) is a slow "
                          f"tokenizer that cannot write {TOKENIZER_FILE}; only fast (tokenizers "
                          "library) tokenizers are supported")
    model = model.to(torch.float32).eval()
    config = _text_config(model)
    if task == "causal-lm":
        last_dim = _first_attr(config, ("vocab_size",))
    else:
        last_dim = _first_attr(config, ("hidden_size", "n_embd", "d_model", "dim"))
    max_positions = _first_attr(config, ("max_position_embeddings", "n_positions"))
    check_len = min(max_check_length, max_positions) if max_positions else max_check_length
    vocab_limit = last_dim if task == "causal-lm" and last_dim else _first_attr(config, ("vocab_size",))
    id_limit = min(x for x in (vocab_limit, len(tokenizer)) if x)
    if task == "causal-lm" and last_dim is not None and len(tokenizer) > last_dim:
        log(f"warning: the tokenizer has {len(tokenizer)} tokens but the model's vocabulary has "
            f"{last_dim}; ids >= {last_dim} cannot be scored")
    pad_id = _token_id(tokenizer, "pad_token_id")
    if pad_id is None or pad_id >= id_limit:
        pad_id = _token_id(tokenizer, "eos_token_id")
    if pad_id is None or pad_id >= id_limit:
        pad_id = 0

    wrapper = _wrap(model, task)
    # Example batch: two right-padded rows of different lengths, so the traced graph keeps the
    # padding path of the attention mask.
    example_ids, example_mask = _right_padded(_random_rows([7, 4], id_limit, seed=7), pad_id)
    with torch.no_grad():
        try:
            eager_out = wrapper(example_ids, example_mask)
        except Exception as e:  # noqa: BLE001 - any failure here means the model is unusable
            raise ExportError(f"'{source}' cannot run forward(input_ids, attention_mask) for task "
                              f"'{task}': {type(e).__name__}: {e}") from e
        _check_output(eager_out, 2, 7, last_dim, task, f"the model '{source}'")
        if last_dim is None:
            last_dim = int(eager_out.shape[2])

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(out_dir.parent, out_dir.name)
    try:
        log(f"tracing '{source}' ({type(model).__name__}, task {task}) ...")
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
            try:
                traced = torch.jit.trace(wrapper, (example_ids, example_mask), check_trace=False,
                                         strict=False)
            except Exception as e:  # noqa: BLE001
                raise ExportError(f"torch.jit.trace failed for '{source}': {type(e).__name__}: {e}") from e
        model_path = tmp / MODEL_FILE
        traced.save(str(model_path))
        del traced
        reloaded = torch.jit.load(str(model_path), map_location="cpu").eval()
        _verify_traced(reloaded, wrapper, task, last_dim, id_limit, pad_id, check_len, log)

        tokenizer.save_pretrained(str(tmp))
        if not (tmp / TOKENIZER_FILE).is_file():
            raise ExportError(
                f"the tokenizer of '{source}' ({type(tokenizer).__name__}) did not write "
                f"{TOKENIZER_FILE}; only fast (tokenizers library) tokenizers are supported"
            )
        _check_saved_tokenizer(tokenizer, tmp)
        metadata = build_metadata(model, tokenizer, task, source, last_dim)
        with open(tmp / METADATA_FILE, "w", encoding="utf-8") as f:
            json.dump(metadata, f, indent=2, ensure_ascii=False)
            f.write("\n")
        move_into_place(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"wrote {out_dir}")
    return out_dir


def _check_saved_tokenizer(tokenizer: Any, saved_dir: Path) -> None:
    """The saved tokenizer must encode like the one in memory."""
    from transformers import AutoTokenizer

    sample = "Hello world: naïve café, 日本語 🙂\n\tend."
    reloaded = AutoTokenizer.from_pretrained(str(saved_dir))
    for special in (True, False):
        a = tokenizer(sample, add_special_tokens=special)["input_ids"]
        b = reloaded(sample, add_special_tokens=special)["input_ids"]
        if a != b:
            raise ExportError(
                f"the saved tokenizer encodes differently from the loaded one "
                f"(add_special_tokens={special}): {b} instead of {a}"
            )


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="export_hf_model.py",
        description=(
            "Export a Hugging Face model and its tokenizer to a TensorCache model directory: "
            "model.pt (TorchScript, forward(input_ids, attention_mask), right padding), "
            "tokenizer.json + tokenizer_config.json (+ chat_template.jinja) and "
            "tensorcache-model.json. The traced file is reloaded and checked against the eager "
            "model before anything is written."
        ),
        epilog="Exit codes: 0 exported, 2 bad argument or model that cannot be exported, "
               "1 unexpected failure.",
    )
    parser.add_argument("--model", required=True, metavar="NAME_OR_DIR",
                        help="a model directory, or a hub name where the hub can be reached")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory to create (must not exist or be empty, unless --overwrite)")
    parser.add_argument("--task", choices=TASKS, default="causal-lm",
                        help="causal-lm: logits [B,T,V] (AutoModelForCausalLM); hidden-states: "
                             "last hidden states [B,T,H] (AutoModel). Default: %(default)s")
    parser.add_argument("--dtype", choices=DTYPES, default="float32",
                        help="weights and outputs dtype. Default: %(default)s")
    parser.add_argument("--max-check-length", type=int, default=DEFAULT_MAX_CHECK_LENGTH,
                        metavar="N",
                        help="longest sequence used to check the traced model against the eager "
                             "one (capped at the model's positions). Default: %(default)s")
    parser.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa",
                        help="attention implementation to trace (default: %(default)s, the faster;"
                             " eager where a model's sdpa export fails its checks)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace DIR if it exists and is not empty")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.max_check_length < 3:
            raise ExportError(f"--max-check-length {args.max_check_length} is too small, "
                              "expected at least 3")
        _prepare_target(Path(args.out).absolute(), args.overwrite)
        model = load_model(args.model, args.task, args.dtype, attn=args.attn)
        tokenizer = load_tokenizer(args.model)
        export(model, tokenizer, args.out, args.task, args.model,
               max_check_length=args.max_check_length, overwrite=args.overwrite)
    except ExportError as e:
        _stderr(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
