"""The split export: ``body.pt`` (hidden states) and ``head.pt`` (the output head and what the
model does to logits after it), traced, reloaded and checked against the eager logits."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

from hf_export import BODY_FILE, HEAD_FILE, ExportError, Log, save_reproducible
from hf_export.trace import check_lengths, random_rows, right_padded, text_config


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
    config = text_config(model)
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


def _wrap_split(model: Any, ops: Sequence[Tuple[str, float]], module: str) -> Tuple[Any, Any]:
    """``(body, head)`` modules around ``model``: ``forward(input_ids, attention_mask) -> [B, T, H]``
    and ``forward(hidden [N, H]) -> [N, V]``; the traced code names their classes after
    ``module``."""
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
    CausalLmBody.__module__ = CausalLmHead.__module__ = module
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
                  pad_id: int, max_len: int, tolerance: float, log: Log) -> None:
    """Check reloaded ``body`` and ``head`` against the eager logits; raise ExportError if they differ.

    ``head(body(ids, mask)[mask])`` must equal the eager model's logits at the non-pad positions
    of right-padded batches, with any number of rows ``N`` for the head, and the body must use the
    attention mask as the eager model does.
    """
    import torch

    long_len = max(3, max_len)
    shapes = check_lengths(long_len)
    with torch.no_grad():
        for n, lengths in enumerate(shapes):
            rows = random_rows(lengths, id_limit, seed=100 + n)
            ids, mask = right_padded(rows, pad_id)
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
            if not diff <= tolerance * max(1.0, scale):
                raise ExportError(
                    f"head(body) differs from the eager model's logits on a right-padded batch of "
                    f"lengths {lengths}: max |difference| {diff:.3g} at non-pad positions (largest "
                    f"|value| {scale:.3g})"
                )
            log(f"check: batch {list(ids.shape)} lengths {lengths}: max |head(body) - eager| = "
                f"{diff:.2e}")

        # The attention mask must be live in the body: hide a middle token of one row.
        rows = random_rows([max(4, min(long_len, 12)), 3], id_limit, seed=200)
        ids, mask = right_padded(rows, pad_id)
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
        if not diff <= tolerance * max(1.0, scale):
            raise ExportError(
                f"head(body) applies attention_mask differently from the eager model (max "
                f"|difference| {diff:.3g} with a masked middle token)"
            )
        log(f"check: attention mask is live in the body (hiding token {hidden_pos} changes "
            f"hidden states by up to {change:.3g}; head(body) vs eager {diff:.2e})")


def export_split(model: Any, wrapper: Any, tmp: Path, source: str, example_ids: Any,
                 example_mask: Any, vocab: int, id_limit: int, pad_id: int, check_len: int,
                 tolerance: float, log: Log, module: str) -> Tuple[int, int, List[Tuple[str, float]]]:
    """Trace, save, reload and verify ``body.pt`` and ``head.pt`` in ``tmp``: logits within
    ``tolerance`` of the largest |value| of the eager model's; the traced classes are named after
    ``module``.

    Returns ``(hidden_size, head_width, postprocess)``. Raises ExportError when the split cannot
    be verified; the caller then writes the logits-only format.
    """
    import torch

    ops = _head_postprocess(model)
    body, head = _wrap_split(model, ops, module)
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
    save_reproducible(traced_body, str(tmp / BODY_FILE))
    save_reproducible(traced_head, str(tmp / HEAD_FILE))
    del traced_body, traced_head
    reloaded_body = torch.jit.load(str(tmp / BODY_FILE), map_location="cpu").eval()
    reloaded_head = torch.jit.load(str(tmp / HEAD_FILE), map_location="cpu").eval()
    _verify_split(reloaded_body, reloaded_head, wrapper, hidden_size, head_width, id_limit,
                  pad_id, check_len, tolerance, log)
    return hidden_size, head_width, ops
