"""The traced module: the wrapper around a model, the example and check batches, and the checks
of a reloaded ``model.pt`` (format 1) against the eager model."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

from hf_export import MODEL_FILE, ExportError, Log, save_reproducible


def wrap(model: Any, task: str, module: str) -> Any:
    """An ``nn.Module`` with ``forward(input_ids, attention_mask) -> Tensor`` around ``model``; the
    traced code names its class after ``module``, the exporting module's ``__name__``."""
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

    CausalLmLogits.__module__ = LastHiddenState.__module__ = module
    wrapper = CausalLmLogits(model) if task == "causal-lm" else LastHiddenState(model)
    return wrapper.eval()


def text_config(model: Any) -> Any:
    config = model.config
    getter = getattr(config, "get_text_config", None)
    return getter() if callable(getter) else config


def first_attr(obj: Any, names: Sequence[str]) -> Optional[int]:
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def right_padded(rows: List[List[int]], pad_id: int) -> Tuple[Any, Any]:
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def random_rows(lengths: Sequence[int], id_limit: int, seed: int) -> List[List[int]]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(0, id_limit, (n,), generator=generator).tolist() for n in lengths]


def check_output(out: Any, batch: int, length: int, last_dim: Optional[int], task: str,
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


def check_lengths(long_len: int) -> List[List[int]]:
    """The row lengths of the batches a traced model is checked on: one unpadded row of
    ``long_len``, then right-padded batches of 3 and 5 rows."""
    shapes = [
        [long_len],                      # batch 1, no padding
        [5, max(2, long_len // 2), 2],   # batch 3, right-padded
        [1, 3, 9, 6, 13],                # batch 5
    ]
    return [[min(n, long_len) for n in lengths] for lengths in shapes]


def _verify_traced(traced: Any, wrapper: Any, task: str, last_dim: Optional[int], id_limit: int,
                   pad_id: int, max_len: int, tolerance: float, log: Log) -> None:
    """Check a reloaded traced module against the eager wrapper; raise ExportError if it differs."""
    import torch

    long_len = max(3, max_len)
    shapes = check_lengths(long_len)
    with torch.no_grad():
        for n, lengths in enumerate(shapes):
            rows = random_rows(lengths, id_limit, seed=100 + n)
            ids, mask = right_padded(rows, pad_id)
            got = traced(ids, mask)
            check_output(got, ids.shape[0], ids.shape[1], last_dim, task,
                          f"the traced model (batch {list(ids.shape)})")
            # reference: the eager model, one row at a time without padding
            ref = torch.zeros_like(got)
            for i, row in enumerate(rows):
                one = torch.tensor([row], dtype=torch.long)
                ref[i, : len(row)] = wrapper(one, torch.ones_like(one))[0]
            diff, scale = _max_diff_at(got, ref, mask)
            if not diff <= tolerance * max(1.0, scale):
                raise ExportError(
                    f"the traced model differs from the eager model on a right-padded batch of "
                    f"lengths {lengths}: max |difference| {diff:.3g} at non-pad positions (largest "
                    f"|value| {scale:.3g}); it cannot be used with other shapes or with padding"
                )
            log(f"check: batch {list(ids.shape)} lengths {lengths}: max |traced - eager| = {diff:.2e}")

        # The attention mask must be live: hide a middle token of one row.
        rows = random_rows([max(4, min(long_len, 12)), 3], id_limit, seed=200)
        ids, mask = right_padded(rows, pad_id)
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
        if not diff <= tolerance * max(1.0, scale):
            raise ExportError(
                f"the traced model applies attention_mask differently from the eager model (max "
                f"|difference| {diff:.3g} with a masked middle token); nothing usable was written"
            )
        log(f"check: attention mask is live (hiding token {hidden_pos} changes outputs by up to "
            f"{change:.3g}; traced vs eager {diff:.2e})")


def export_logits_only(wrapper: Any, tmp: Path, task: str, source: str, model: Any,
                       example_ids: Any, example_mask: Any, last_dim: int, id_limit: int,
                       pad_id: int, check_len: int, tolerance: float, log: Log) -> None:
    """Trace, save, reload and verify ``model.pt`` (format 1) in ``tmp``: outputs within
    ``tolerance`` of the largest |value| of the eager model's."""
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
    save_reproducible(traced, str(model_path))
    del traced
    reloaded = torch.jit.load(str(model_path), map_location="cpu").eval()
    _verify_traced(reloaded, wrapper, task, last_dim, id_limit, pad_id, check_len, tolerance, log)
