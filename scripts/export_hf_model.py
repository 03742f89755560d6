#!/usr/bin/env python3
"""Export a Hugging Face model to a TorchScript model directory that TensorCache can load.

A causal language model (task ``causal-lm``) is exported split in two (format version 2):

* ``body.pt``: a traced module ``forward(input_ids, attention_mask)`` taking int64 ``[B, T]``
  tensors, right-padded, and returning float32 ``[B, T, H]`` hidden states: exactly what the
  output head takes (after the final norm);
* ``head.pt``: a traced module ``forward(hidden)`` taking float32 ``[N, H]`` and returning float32
  ``[N, V]`` logits: the output head plus whatever the model does to logits after it
  (``final_logit_softcapping`` of Gemma 2/3, ``logit_scale`` of Cohere, ``logits_scaling`` of
  Granite), so that only the positions that are scored need the ``V``-wide head.

The logits-only format (version 1, ``--logits-only``) and task ``hidden-states`` write one file
instead:

* ``model.pt``: a traced module ``forward(input_ids, attention_mask)`` taking int64 ``[B, T]``
  tensors, right-padded, and returning float32 ``[B, T, V]`` logits (task ``causal-lm``) or
  ``[B, T, H]`` last hidden states (task ``hidden-states``).

Every directory also holds:

* ``tokenizer.json``, ``tokenizer_config.json`` and ``chat_template.jinja`` (when the tokenizer
  has a chat template), written by ``tokenizer.save_pretrained``;
* ``tensorcache-model.json``: what the model is, which token ids it uses, and (format 2) which
  files hold the body and the head, with the dimensions needed to estimate memory; and the
  digests a trainer checks its own model and tokenizer against (``tensorcache.digests``):
  ``model_state_sha256`` (the state of the model as given to the export, before it is put in
  float32), ``tokenizer_state_sha256`` and ``chat_template_sha256`` (null without a template).

Before anything is written the saved TorchScript files are reloaded and checked against the
eager model: other batch sizes and lengths must give the same outputs at non-pad positions
(``head(body(ids, mask))`` at non-pad positions against the eager logits for a split export), and
the attention mask must still change the output (a graph that ignores the mask would silently give
wrong values for padded batches). A model whose split export cannot be verified this way (one
that changes its logits in a way not listed above, say) is exported in the logits-only format
instead, with a note saying why. All files are written to a temporary directory beside the target
and renamed into place at the end, so a failed export leaves nothing behind.

Only right padding is supported: position ids are derived from token positions, not from the
mask.

Example::

    python scripts/export_hf_model.py --model gpt2 --out models/gpt2
    python scripts/export_hf_model.py --model gpt2 --out models/gpt2-v1 --logits-only
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

try:
    from tensorcache import digests
except ImportError:  # run from a checkout: the package lies beside scripts/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    for _name in [m for m in sys.modules if m == "tensorcache" or m.startswith("tensorcache.")]:
        del sys.modules[_name]
    from tensorcache import digests

FORMAT_VERSION = 1
SPLIT_FORMAT_VERSION = 2
TASKS = ("causal-lm", "hidden-states")
DTYPES = ("float32",)
MODEL_FILE = "model.pt"
BODY_FILE = "body.pt"
HEAD_FILE = "head.pt"
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


def _check_lengths(long_len: int) -> List[List[int]]:
    """The row lengths of the batches a traced model is checked on: one unpadded row of
    ``long_len``, then right-padded batches of 3 and 5 rows."""
    shapes = [
        [long_len],                      # batch 1, no padding
        [5, max(2, long_len // 2), 2],   # batch 3, right-padded
        [1, 3, 9, 6, 13],                # batch 5
    ]
    return [[min(n, long_len) for n in lengths] for lengths in shapes]


def _verify_traced(traced: Any, wrapper: Any, task: str, last_dim: Optional[int], id_limit: int,
                   pad_id: int, max_len: int, log: Log) -> None:
    """Check a reloaded traced module against the eager wrapper; raise ExportError if it differs."""
    import torch

    long_len = max(3, max_len)
    shapes = _check_lengths(long_len)
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
# The split export: body.pt (hidden states) and head.pt (output head)
# --------------------------------------------------------------------------------------------


def _body_module(model: Any) -> Any:
    """The backbone whose ``last_hidden_state`` the output head of ``model`` takes."""
    try:
        body = model.get_decoder()
    except Exception:  # noqa: BLE001 - a model without a usable rule simply has no split
        body = None
    if body is None or body is model:
        prefix = getattr(model, "base_model_prefix", "")
        body = getattr(model, prefix, None) if prefix else None
    if body is None or body is model:
        raise ExportError(f"{type(model).__name__} has no separate backbone (get_decoder() and "
                          "base_model_prefix give none)")
    return body


def _head_postprocess(model: Any) -> List[Tuple[str, float]]:
    """What ``model`` does to the output of its head before returning logits, from its config.

    ``("multiply", s)`` (Cohere ``logit_scale``), ``("divide", d)`` (Granite ``logits_scaling``)
    and ``("softcap", c)`` (Gemma 2/3 ``final_logit_softcapping``: ``tanh(x / c) * c``), in the
    order they are applied.
    """
    config = _text_config(model)
    ops: List[Tuple[str, float]] = []

    def number(*sources_and_names: Tuple[Any, str]) -> Optional[float]:
        for source, name in sources_and_names:
            value = getattr(source, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        return None

    scale = number((model, "logit_scale"), (config, "logit_scale"))
    if scale is not None and scale != 1.0:
        ops.append(("multiply", scale))
    divisor = number((config, "logits_scaling"), (model.config, "logits_scaling"))
    if divisor is not None and divisor != 1.0:
        ops.append(("divide", divisor))
    cap = number((config, "final_logit_softcapping"), (model.config, "final_logit_softcapping"))
    if cap is not None and cap > 0:
        ops.append(("softcap", cap))
    return ops


def _wrap_split(model: Any, ops: Sequence[Tuple[str, float]]) -> Tuple[Any, Any]:
    """``(body, head)`` modules around ``model``: ``forward(input_ids, attention_mask) -> [B, T, H]``
    and ``forward(hidden [N, H]) -> [N, V]``."""
    import torch

    class CausalLmBody(torch.nn.Module):
        """Hidden states ``[B, T, H]`` that the output head takes, no key/value cache."""

        def __init__(self, inner: torch.nn.Module, use_cache_arg: bool) -> None:
            super().__init__()
            self.inner = inner
            self.use_cache_arg = use_cache_arg

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            if self.use_cache_arg:
                out = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                 use_cache=False, return_dict=True)
            else:
                out = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                 return_dict=True)
            return out.last_hidden_state

    class CausalLmHead(torch.nn.Module):
        """Logits ``[N, V]`` for hidden states ``[N, H]``: the output head and what follows it."""

        def __init__(self, inner: torch.nn.Module, post: Sequence[Tuple[str, float]]) -> None:
            super().__init__()
            self.inner = inner
            self.post = list(post)

        def forward(self, hidden: torch.Tensor) -> torch.Tensor:
            logits = self.inner(hidden)
            for op, value in self.post:
                if op == "multiply":
                    logits = logits * value
                elif op == "divide":
                    logits = logits / value
                else:  # softcap, as the models do it
                    logits = logits / value
                    logits = torch.tanh(logits)
                    logits = logits * value
            return logits

    inner = _body_module(model)
    head = model.get_output_embeddings()
    if not isinstance(head, torch.nn.Module):
        raise ExportError(f"{type(model).__name__} has no output embeddings module "
                          "(get_output_embeddings() gives none)")
    probe = torch.zeros((1, 2), dtype=torch.long)
    use_cache_arg = True
    with torch.no_grad():
        try:
            inner(input_ids=probe, attention_mask=torch.ones_like(probe), use_cache=False,
                  return_dict=True)
        except TypeError:
            use_cache_arg = False
        except Exception:  # noqa: BLE001 - the checks below report what is wrong
            pass
    return CausalLmBody(inner, use_cache_arg).eval(), CausalLmHead(head, ops).eval()


def _check_tensor(out: Any, shape: Sequence[Optional[int]], kind: str, what: str) -> None:
    import torch

    if not isinstance(out, torch.Tensor):
        raise ExportError(f"{what} returned {type(out).__name__}, expected a float tensor of {kind}")
    if not out.is_floating_point():
        raise ExportError(f"{what} returned dtype {out.dtype}, expected a float tensor of {kind}")
    if out.dim() != len(shape) or any(w is not None and n != w for n, w in zip(out.shape, shape)):
        want = ", ".join("?" if w is None else str(w) for w in shape)
        raise ExportError(f"{what} returned shape {list(out.shape)}, expected {kind} [{want}]")


def _max_diff(a: Any, b: Any) -> Tuple[float, float]:
    """Largest |a - b| and largest |b|."""
    diff = (a.double() - b.double()).abs()
    ref = b.double().abs()
    return float(diff.max()) if diff.numel() else 0.0, float(ref.max()) if ref.numel() else 0.0


def _verify_split(body: Any, head: Any, wrapper: Any, hidden_size: int, vocab: int, id_limit: int,
                  pad_id: int, max_len: int, log: Log) -> None:
    """Check reloaded ``body`` and ``head`` against the eager logits; raise ExportError if they differ.

    ``head(body(ids, mask)[mask])`` must equal the eager model's logits at the non-pad positions
    of right-padded batches, with any number of rows ``N`` for the head, and the body must use the
    attention mask as the eager model does.
    """
    import torch

    long_len = max(3, max_len)
    shapes = _check_lengths(long_len)
    with torch.no_grad():
        for n, lengths in enumerate(shapes):
            rows = _random_rows(lengths, id_limit, seed=100 + n)
            ids, mask = _right_padded(rows, pad_id)
            hidden = body(ids, mask)
            _check_tensor(hidden, [ids.shape[0], ids.shape[1], hidden_size], "hidden states",
                          f"the traced body (batch {list(ids.shape)})")
            flat = hidden[mask.bool()].contiguous()
            got = head(flat)
            _check_tensor(got, [flat.shape[0], vocab], "logits", f"the traced head ([N, H] with "
                          f"N = {flat.shape[0]})")
            one = head(flat[:1].contiguous())
            _check_tensor(one, [1, vocab], "logits", "the traced head ([N, H] with N = 1)")
            # reference: the eager model, one row at a time without padding
            ref = torch.cat([wrapper(torch.tensor([row], dtype=torch.long),
                                     torch.ones((1, len(row)), dtype=torch.long))[0] for row in rows])
            diff, scale = _max_diff(got, ref)
            diff_one, _ = _max_diff(one, ref[:1])
            diff = max(diff, diff_one)
            if not diff <= RELATIVE_TOLERANCE * max(1.0, scale):
                raise ExportError(
                    f"head(body) differs from the eager model's logits on a right-padded batch of "
                    f"lengths {lengths}: max |difference| {diff:.3g} at non-pad positions (largest "
                    f"|value| {scale:.3g})"
                )
            log(f"check: batch {list(ids.shape)} lengths {lengths}: max |head(body) - eager| = "
                f"{diff:.2e}")

        # The attention mask must be live in the body: hide a middle token of one row.
        rows = _random_rows([max(4, min(long_len, 12)), 3], id_limit, seed=200)
        ids, mask = _right_padded(rows, pad_id)
        hole = mask.clone()
        hidden_pos = len(rows[0]) // 2
        hole[0, hidden_pos] = 0
        keep = hole.bool()
        full_out = body(ids, mask)
        hole_out = body(ids, hole)
        change, scale = _max_diff(hole_out[keep], full_out[keep])
        if not change > 1e-6 * max(1.0, scale):
            raise ExportError("the traced body ignores attention_mask: hiding a token did not "
                              "change any hidden state")
        got = head(hole_out[keep].contiguous())
        diff, scale = _max_diff(got, wrapper(ids, hole)[keep])
        if not diff <= RELATIVE_TOLERANCE * max(1.0, scale):
            raise ExportError(
                f"head(body) applies attention_mask differently from the eager model (max "
                f"|difference| {diff:.3g} with a masked middle token)"
            )
        log(f"check: attention mask is live in the body (hiding token {hidden_pos} changes "
            f"hidden states by up to {change:.3g}; head(body) vs eager {diff:.2e})")


def _export_split(model: Any, wrapper: Any, tmp: Path, source: str, example_ids: Any,
                  example_mask: Any, vocab: int, id_limit: int, pad_id: int, check_len: int,
                  log: Log) -> Tuple[int, int, List[Tuple[str, float]]]:
    """Trace, save, reload and verify ``body.pt`` and ``head.pt`` in ``tmp``.

    Returns ``(hidden_size, head_width, postprocess)``. Raises ExportError when the split cannot
    be verified; the caller then writes the logits-only format.
    """
    import torch

    ops = _head_postprocess(model)
    body, head = _wrap_split(model, ops)
    with torch.no_grad():
        try:
            example_hidden = body(example_ids, example_mask)
        except Exception as e:  # noqa: BLE001
            raise ExportError(f"the backbone cannot run forward(input_ids, attention_mask): "
                              f"{type(e).__name__}: {e}") from e
        _check_tensor(example_hidden, [example_ids.shape[0], example_ids.shape[1], None],
                      "hidden states", "the backbone")
        hidden_size = int(example_hidden.shape[2])
        example_flat = example_hidden[example_mask.bool()].contiguous()
        try:
            example_logits = head(example_flat)
        except Exception as e:  # noqa: BLE001
            raise ExportError(f"the output head cannot take the backbone's hidden states: "
                              f"{type(e).__name__}: {e}") from e
        _check_tensor(example_logits, [example_flat.shape[0], None], "logits", "the output head")
        head_width = int(example_logits.shape[1])
        if head_width != vocab:
            raise ExportError(f"the output head is {head_width} wide, but the model's logits "
                              f"have {vocab} entries")

    post = ", ".join(f"{op} {value:g}" for op, value in ops) or "none"
    log(f"tracing '{source}' ({type(model).__name__}, task causal-lm) as {BODY_FILE} "
        f"(hidden {hidden_size}) + {HEAD_FILE} (vocabulary {head_width}; after the head: {post}) ...")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
        try:
            traced_body = torch.jit.trace(body, (example_ids, example_mask), check_trace=False,
                                          strict=False)
            traced_head = torch.jit.trace(head, (example_flat,), check_trace=False, strict=False)
        except Exception as e:  # noqa: BLE001
            raise ExportError(f"torch.jit.trace failed: {type(e).__name__}: {e}") from e
    traced_body.save(str(tmp / BODY_FILE))
    traced_head.save(str(tmp / HEAD_FILE))
    del traced_body, traced_head
    reloaded_body = torch.jit.load(str(tmp / BODY_FILE), map_location="cpu").eval()
    reloaded_head = torch.jit.load(str(tmp / HEAD_FILE), map_location="cpu").eval()
    _verify_split(reloaded_body, reloaded_head, wrapper, hidden_size, head_width, id_limit,
                  pad_id, check_len, log)
    return hidden_size, head_width, ops


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
    config = _text_config(model)
    heads = _first_attr(config, ("num_attention_heads", "n_head", "num_heads"))
    kv_heads = _first_attr(config, ("num_key_value_heads", "num_kv_heads", "n_head_kv",
                                    "multi_query_group_num"))
    layers = _first_attr(config, ("num_hidden_layers", "n_layer", "num_layers"))
    intermediate = _first_attr(config, ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"))
    if intermediate is None and hasattr(config, "n_inner"):
        intermediate = 4 * hidden_size  # GPT-2 style configs: n_inner None means 4 * hidden
    head_dim = _first_attr(config, ("head_dim",))
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


def export(model: Any, tokenizer: Any, out_dir: "str | os.PathLike[str]", task: str, source: str,
           *, max_check_length: int = DEFAULT_MAX_CHECK_LENGTH, overwrite: bool = False,
           log: Log = _stderr, split: bool = True) -> Path:
    """Trace ``model``, check the saved files, and write a TensorCache model directory.

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
        split: for ``causal-lm``, write ``body.pt`` + ``head.pt`` (format 2) when that split can be
            verified, else (with a note to ``log``) the logits-only ``model.pt``; ``False`` always
            writes ``model.pt`` (format 1). Ignored for ``hidden-states``.

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
    # what a trainer holding the same model and tokenizer computes again; taken before the
    # model is changed here
    state_digests = input_digests(model, tokenizer)
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
        split_dims: Optional[Tuple[int, int, List[Tuple[str, float]]]] = None
        if split and task == "causal-lm":
            try:
                split_dims = _export_split(model, wrapper, tmp, source, example_ids, example_mask,
                                           last_dim, id_limit, pad_id, check_len, log)
            except Exception as e:  # noqa: BLE001 - any failure of the split means format 1
                for name in (BODY_FILE, HEAD_FILE):
                    (tmp / name).unlink(missing_ok=True)
                why = str(e) if isinstance(e, ExportError) else f"{type(e).__name__}: {e}"
                log(f"note: the split export ({BODY_FILE} + {HEAD_FILE}) of '{source}' cannot be "
                    f"used: {why}; writing the logits-only {MODEL_FILE} (format {FORMAT_VERSION}) "
                    "instead")
        if split_dims is None:
            _export_logits_only(wrapper, tmp, task, source, model, example_ids, example_mask,
                                last_dim, id_limit, pad_id, check_len, log)

        tokenizer.save_pretrained(str(tmp))
        if not (tmp / TOKENIZER_FILE).is_file():
            raise ExportError(
                f"the tokenizer of '{source}' ({type(tokenizer).__name__}) did not write "
                f"{TOKENIZER_FILE}; only fast (tokenizers library) tokenizers are supported"
            )
        _check_saved_tokenizer(tokenizer, tmp)
        if split_dims is None:
            metadata = build_metadata(model, tokenizer, task, source, last_dim)
        else:
            metadata = build_split_metadata(model, tokenizer, source, *split_dims)
        metadata.update(state_digests)
        with open(tmp / METADATA_FILE, "w", encoding="utf-8") as f:
            json.dump(metadata, f, indent=2, ensure_ascii=False)
            f.write("\n")
        move_into_place(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"wrote {out_dir}")
    return out_dir


def _export_logits_only(wrapper: Any, tmp: Path, task: str, source: str, model: Any,
                        example_ids: Any, example_mask: Any, last_dim: int, id_limit: int,
                        pad_id: int, check_len: int, log: Log) -> None:
    """Trace, save, reload and verify ``model.pt`` (format 1) in ``tmp``."""
    import torch

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
            "Export a Hugging Face model and its tokenizer to a TensorCache model directory. "
            "Task causal-lm writes body.pt (TorchScript, forward(input_ids, attention_mask) -> "
            "hidden states [B,T,H], right padding) and head.pt (forward(hidden [N,H]) -> logits "
            "[N,V], including any logit softcapping or scaling the model applies), or with "
            "--logits-only (and wherever the split cannot be verified) a single model.pt "
            "returning logits [B,T,V]; task hidden-states writes model.pt returning [B,T,H]. "
            "Also tokenizer.json + tokenizer_config.json (+ chat_template.jinja) and "
            "tensorcache-model.json. The traced files are reloaded and checked against the eager "
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
                        help="causal-lm: a language model (AutoModelForCausalLM) scored through "
                             "body.pt + head.pt, or model.pt logits [B,T,V] with --logits-only; "
                             "hidden-states: model.pt returning last hidden states [B,T,H] "
                             "(AutoModel). Default: %(default)s")
    parser.add_argument("--dtype", choices=DTYPES, default="float32",
                        help="weights and outputs dtype. Default: %(default)s")
    parser.add_argument("--max-check-length", type=int, default=DEFAULT_MAX_CHECK_LENGTH,
                        metavar="N",
                        help="longest sequence used to check the traced files against the eager "
                             "model (capped at the model's positions). Default: %(default)s")
    parser.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa",
                        help="attention implementation to trace (default: %(default)s, the faster;"
                             " eager where a model's sdpa export fails its checks)")
    parser.add_argument("--logits-only", action="store_true",
                        help="causal-lm: write the format 1 model.pt returning full logits [B,T,V] "
                             "instead of body.pt + head.pt (format 2); no effect on hidden-states")
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
               max_check_length=args.max_check_length, overwrite=args.overwrite,
               split=not args.logits_only)
    except ExportError as e:
        _stderr(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
