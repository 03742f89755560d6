"""The independent cross-check: every expected value recomputed from the exported TorchScript
files (``model.pt``, or ``body.pt`` + ``head.pt`` with the head only at scored positions), and the
split copies checked against ``model.pt``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from byo_fixtures import FixtureError



def _traced_logps(model: Any, sequences: List[Tuple[List[int], List[int]]], pad_id: int) -> List[Tuple[float, int]]:
    """Sum of completion-token log-probs for (ids, completion mask) pairs, one right-padded batch."""
    import torch

    width = max(len(s) for s, _ in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    att = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, (s, _) in enumerate(sequences):
        ids[i, : len(s)] = torch.tensor(s)
        att[i, : len(s)] = 1
    with torch.no_grad():
        logp = torch.log_softmax(model(ids, att).double(), dim=-1)
    out = []
    for i, (s, m) in enumerate(sequences):
        total, count = 0.0, 0
        for t in range(1, len(s)):
            if m[t]:
                total += float(logp[i, t - 1, s[t]])
                count += 1
        out.append((total, count))
    return out


def _truncate(seq: List[int], mask: List[int], max_length: Optional[int], mode: str) -> Tuple[List[int], List[int]]:
    if max_length is None or len(seq) <= max_length:
        return seq, mask
    return (seq[:max_length], mask[:max_length]) if mode == "keep_start" else (seq[-max_length:], mask[-max_length:])


def cross_check(out: Path, expected: Dict[str, Any], embedding: Dict[str, Any]) -> float:
    """Recompute every expected value from the exported model.pt files; return the worst ratio."""
    import torch

    worst = 0.0
    loaded: Dict[str, Any] = {}
    for case in expected["cases"]:
        name = case["model"]
        if name not in loaded:
            loaded[name] = torch.jit.load(str(out / name / "model.pt")).eval()
        meta = json.loads((out / name / "tensorcache-model.json").read_text(encoding="utf-8"))
        kept = [r for r in case["rows"] if not r["dropped"]]
        dropped = [r for r in case["rows"] if r["dropped"]]
        for r in dropped:
            if not (case["truncation_mode"] == "keep_start" and case["max_length"] is not None
                    and len(r["prompt_ids"]) >= case["max_length"]):
                raise FixtureError(f"{case['name']} row {r['index']}: dropped for no known reason")
        sequences = []
        for r in kept:
            for key in ("chosen_ids", "rejected_ids"):
                seq = r["prompt_ids"] + r[key]
                mask = [0] * len(r["prompt_ids"]) + [1] * len(r[key])
                sequences.append(_truncate(seq, mask, case["max_length"], case["truncation_mode"]))
        got = _traced_logps(loaded[name], sequences, meta["pad_token_id"])
        for k, r in enumerate(kept):
            for j, side in enumerate(("chosen", "rejected")):
                value, count = got[2 * k + j]
                want = r[f"{side}_logp"]
                ratio = abs(value - want) / (1e-4 * max(1.0, abs(want)))
                worst = max(worst, ratio)
                if ratio > 1.0 or count != r[f"{side}_tokens"]:
                    raise FixtureError(
                        f"{case['name']} row {r['index']} {side}: model.pt gives {value} over {count} "
                        f"tokens, TRL {want} over {r[side + '_tokens']}")
    encoder = torch.jit.load(str(out / "encoder" / "model.pt")).eval()
    for r in embedding["rows"]:
        ids = torch.tensor([r["ids"]])
        with torch.no_grad():
            hidden = encoder(ids, torch.ones_like(ids))[0].double()
        mean = hidden.mean(dim=0)
        want = torch.tensor(r["embedding"], dtype=torch.float64)
        diff = float((mean - want).abs().max())
        if diff > 1e-4 * max(1.0, float(want.abs().max())):
            raise FixtureError(f"embedding row {r['index']}: model.pt differs from eager by {diff}")
    return worst


def _split_logps(body: Any, head: Any, sequences: List[Tuple[List[int], List[int]]], pad_id: int,
                 batch_size: int = 4) -> List[Tuple[float, int]]:
    """Like _traced_logps through body.pt + head.pt: the head only sees the scored positions."""
    import torch

    out = []
    for start in range(0, len(sequences), batch_size):
        chunk = sequences[start: start + batch_size]
        width = max(len(s) for s, _ in chunk)
        ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
        att = torch.zeros((len(chunk), width), dtype=torch.long)
        for i, (s, _) in enumerate(chunk):
            ids[i, : len(s)] = torch.tensor(s)
            att[i, : len(s)] = 1
        with torch.no_grad():
            hidden = body(ids, att)
            for i, (s, m) in enumerate(chunk):
                scored = [t for t in range(1, len(s)) if m[t]]
                if not scored:
                    out.append((0.0, 0))
                    continue
                logits = head(hidden[i, [t - 1 for t in scored]].contiguous())
                logp = torch.log_softmax(logits.double(), dim=-1)
                picked = logp[torch.arange(len(scored)), torch.tensor([s[t] for t in scored])]
                out.append((float(picked.sum()), len(scored)))
    return out


def cross_check_split(model_dirs: Dict[str, Path], cases: List[Dict[str, Any]]) -> float:
    """Recompute the cases of the models in ``model_dirs`` from their body.pt + head.pt files.

    Returns the worst |difference| as a fraction of the 1e-4 * max(1, |value|) tolerance.
    """
    import torch

    worst = 0.0
    loaded: Dict[str, Tuple[Any, Any, int]] = {}
    for case in cases:
        name = case["model"]
        if name not in model_dirs:
            continue
        if name not in loaded:
            d = model_dirs[name]
            meta = json.loads((d / "tensorcache-model.json").read_text(encoding="utf-8"))
            if meta.get("format_version") != 2 or (d / "model.pt").exists():
                raise FixtureError(f"{d} is not a split (format 2) model directory")
            loaded[name] = (torch.jit.load(str(d / meta["files"]["body"])).eval(),
                            torch.jit.load(str(d / meta["files"]["head"])).eval(),
                            int(meta["pad_token_id"]))
        body, head, pad_id = loaded[name]
        kept = [r for r in case["rows"] if not r["dropped"]]
        for r in case["rows"]:
            if r["dropped"] and not (case["truncation_mode"] == "keep_start"
                                     and case["max_length"] is not None
                                     and len(r["prompt_ids"]) >= case["max_length"]):
                raise FixtureError(f"{case['name']} row {r['index']}: dropped for no known reason")
        sequences = []
        for r in kept:
            for key in ("chosen_ids", "rejected_ids"):
                seq = r["prompt_ids"] + r[key]
                mask = [0] * len(r["prompt_ids"]) + [1] * len(r[key])
                sequences.append(_truncate(seq, mask, case["max_length"], case["truncation_mode"]))
        got = _split_logps(body, head, sequences, pad_id)
        for k, r in enumerate(kept):
            for j, side in enumerate(("chosen", "rejected")):
                value, count = got[2 * k + j]
                want = r[f"{side}_logp"]
                ratio = abs(value - want) / (1e-4 * max(1.0, abs(want)))
                worst = max(worst, ratio)
                if ratio > 1.0 or count != r[f"{side}_tokens"]:
                    raise FixtureError(
                        f"{case['name']} row {r['index']} {side}: {model_dirs[name].name}/body.pt + "
                        f"head.pt give {value} over {count} tokens, TRL {want} over "
                        f"{r[side + '_tokens']}")
    return worst


def check_same_model(split_dir: Path, logits_dir: Path, tokenizer_files: Sequence[str]) -> float:
    """``split_dir`` holds the model of ``logits_dir`` (format 1): same tokenizer files, and
    head(body) equals model.pt's logits on a right-padded batch. Returns the largest difference."""
    import torch

    for f in tokenizer_files:
        if (split_dir / f).read_bytes() != (logits_dir / f).read_bytes():
            raise FixtureError(f"{split_dir.name}/{f} differs from {logits_dir.name}/{f}")
    meta = json.loads((split_dir / "tensorcache-model.json").read_text(encoding="utf-8"))
    body = torch.jit.load(str(split_dir / meta["files"]["body"])).eval()
    head = torch.jit.load(str(split_dir / meta["files"]["head"])).eval()
    full = torch.jit.load(str(logits_dir / "model.pt")).eval()
    generator = torch.Generator().manual_seed(5)
    lengths = [40, 7, 23]
    ids = torch.full((len(lengths), max(lengths)), int(meta["pad_token_id"]), dtype=torch.long)
    att = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(0, int(meta["tokenizer_vocab_size"]), (n,), generator=generator)
        att[i, :n] = 1
    with torch.no_grad():
        keep = att.bool()
        got = head(body(ids, att)[keep])
        want = full(ids, att)[keep]
    diff = float((got - want).abs().max())
    if diff > 1e-4 * max(1.0, float(want.abs().max())):
        raise FixtureError(f"{split_dir.name} differs from {logits_dir.name}/model.pt by {diff}")
    return diff
