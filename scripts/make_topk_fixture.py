#!/usr/bin/env python3
"""Reference values for the top-K teacher: per trained token of each row, the top-K ids of
``log_softmax(logits / T)`` (ties to the lowest id), their log-probs and the log of the mass
outside them, computed with PyTorch from the exported model files of the byo fixtures.

Rows: ``data/completion.jsonl`` (TRL prompt-completion rows made from ``data/text.jsonl``: the
prompt and the chosen completion) and ``data/completion_tokens.jsonl`` (TRL's own tokenization of
them for llama, with one row's mask given a hole and a second run, as assistant masks of several
turns have) and ``data/messages.gpt2.jsonl`` (``prepare_dataset.py``'s output for the conversations
of ``data/conversational.jsonl``, prompt then chosen, labeled as TRL's DataCollatorForChatML). Which tokens are trained on is TRL's own: ``SFTTrainer._prepare_dataset`` (with
``completion_only_loss``) builds the labels and truncates; a position ``p`` whose label is not
-100, ``p >= 1``, is predicted by the logits at ``p - 1``. Rows TRL drops (no label left) are
marked ``dropped``.

The reference runs each row alone, unpadded, through ``model.pt`` (or ``body.pt`` then
``head.pt`` at the predicting positions), and selects with a stable sort: ids ordered by log-prob
descending, ties by ascending id; the tail is ``logsumexp`` of the log-probs outside the K
(float32), ``-inf`` when none is left. ``ties`` holds constructed logits with ties at and inside
the K-th place and their expected selection.

Example::

    python scripts/make_topk_fixture.py --byo model-runner/src/test/resources/byo
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List, Optional

import torch

# (name, model directory, rows file, max_length, truncation_mode, K, temperature)
CASES = [
    ("llama-completion", "llama", "completion", None, "keep_start", 5, 1.0),
    ("gpt2-split-completion", "gpt2-split", "completion", None, "keep_start", 5, 0.7),
    ("llama-tokens", "llama", "completion_tokens", None, "keep_start", 8, 2.0),
    ("llama-split-tokens", "llama-split", "completion_tokens", None, "keep_start", 8, 2.0),
    ("llama-split-completion-keep_start-12", "llama-split", "completion", 12, "keep_start", 4, 1.0),
    ("llama-completion-keep_end-12", "llama", "completion", 12, "keep_end", 4, 1.0),
    ("gpt2-messages", "gpt2", "messages.gpt2", None, "keep_start", 6, 1.0),
]


def select(logp: torch.Tensor, k: int) -> Dict[str, Any]:
    """The reference selection over ``logp`` ``[n, V]`` (float32)."""
    order = torch.sort(-logp, dim=-1, stable=True).indices[:, :k]
    picked = torch.gather(logp, 1, order)
    rest = logp.clone()
    rest.scatter_(1, order, float("-inf"))
    tails = torch.logsumexp(rest, dim=-1)
    # 9 significant digits give a float32 back exactly
    return {"ids": order.tolist(), "logps": [[float(f"{x:.9g}") for x in r] for r in picked.tolist()],
            "tails": [float(f"{t:.9g}") if math.isfinite(t) else "-inf" for t in tails.tolist()]}


def trl_labels(rows: List[Dict[str, Any]], tokenizer: Any, max_length: Optional[int],
               mode: str) -> List[Optional[Dict[str, List[int]]]]:
    """TRL's SFT dataset preparation of ``rows``: ids and labels per row, None when dropped."""
    import datasets
    from trl import SFTTrainer

    datasets.disable_progress_bars()
    keys = list(dict.fromkeys(k for row in rows for k in row))
    columns = {k: [row.get(k) for row in rows] for k in keys}
    dataset = datasets.Dataset.from_dict({**columns, "index": list(range(len(rows)))})
    view = SimpleNamespace(_tokenizer=tokenizer, _is_vision_dataset=False, chat_template=None,
                           completion_only_loss=True)
    args = SimpleNamespace(dataset_num_proc=None, max_length=max_length, truncation_mode=mode,
                           dataset_text_field="text", assistant_only_loss=False,
                           shuffle_dataset=False, use_liger_kernel=False, packing_strategy="bfd")
    prepared = SFTTrainer._prepare_dataset(view, dataset, tokenizer, args, False, None, "train")
    out: List[Optional[Dict[str, List[int]]]] = [None] * len(rows)
    for r in prepared:
        out[int(r["index"])] = {"input_ids": list(r["input_ids"]), "labels": list(r["labels"])}
    return out


class Model:
    """An exported model directory run with PyTorch: logits at chosen positions of one row."""

    def __init__(self, directory: Path):
        self.split = (directory / "body.pt").exists()
        if self.split:
            self.body = torch.jit.load(str(directory / "body.pt"))
            self.head = torch.jit.load(str(directory / "head.pt"))
        else:
            self.model = torch.jit.load(str(directory / "model.pt"))

    def logits(self, ids: List[int], positions: List[int]) -> torch.Tensor:
        x = torch.tensor([ids], dtype=torch.long)
        mask = torch.ones_like(x)
        with torch.no_grad():
            if self.split:
                return self.head(self.body(x, mask)[0, positions])
            return self.model(x, mask)[0, positions]


def prepare_messages(byo: Path) -> List[Dict[str, Any]]:
    """The conversations prepared by ``prepare_dataset.py`` for gpt2, written beside the data."""
    import tempfile

    import prepare_dataset

    rows = [json.loads(line) for line in (byo / "data/conversational.jsonl").read_text().splitlines()]
    out = byo / "data/messages.gpt2.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "messages.jsonl"
        source.write_text("".join(json.dumps({"messages": r["prompt"] + r["chosen"]},
                                             ensure_ascii=False) + "\n" for r in rows))
        prepare_dataset.prepare(byo / "gpt2", source, out, engine="trl", log=lambda m: None)
    return [json.loads(line) for line in out.read_text().splitlines()[1:]]


def make_rows(byo: Path) -> Dict[str, List[Dict[str, Any]]]:
    """The prompt-completion rows, and TRL's tokenization of them for llama with mask edits."""
    from transformers import AutoTokenizer

    text = [json.loads(line) for line in (byo / "data/text.jsonl").read_text().splitlines()]
    completion = [{"prompt": r["prompt"], "completion": r["chosen"]} for r in text]
    tokenizer = AutoTokenizer.from_pretrained(str(byo / "llama"))
    tokens = []
    for r in trl_labels(completion, tokenizer, None, "keep_start"):
        mask = [0 if label == -100 else 1 for label in r["labels"]]
        tokens.append({"input_ids": r["input_ids"], "completion_mask": mask})
    # a second trained run inside the prompt, and a hole in the completion (several turns)
    row = tokens[2]["completion_mask"]
    first = row.index(1)
    row[1:3] = [1, 1]
    if len(row) - first > 3:
        row[first + 1] = 0
    return {"completion": completion, "completion_tokens": tokens}


def ties() -> Dict[str, Any]:
    """Constructed logits with ties at the K-th place, inside the K and a whole equal row."""
    v = 16
    rows = [
        [0.0] * v,
        [3.0, 1.0, 2.0, 2.0, 0.5, 2.0, 2.0, 1.0] + [-1.0] * 8,
        [1.0, 5.0, 5.0, 0.0, 5.0, -2.0, 4.0, 4.0] + [-3.0] * 8,
        [float(i % 5) for i in range(v)],
        [-1e4] * 4 + [7.0, 7.0] + [-1e4] * 10,
    ]
    logits = torch.tensor(rows, dtype=torch.float32)
    out = []
    for k, t in ((3, 1.0), (4, 0.5), (1, 1.0), (16, 1.0)):
        out.append({"k": k, "temperature": t,
                    **select(torch.log_softmax(logits / t, dim=-1), k)})
    return {"logits": rows, "cases": out}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--byo", required=True, type=Path, help="the byo fixture directory")
    args = parser.parse_args(argv)
    byo: Path = args.byo
    from transformers import AutoTokenizer

    data = make_rows(byo)
    for name, rows in list(data.items()):
        with open(byo / f"data/{name}.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    data["messages.gpt2"] = prepare_messages(byo)
    cases = []
    for name, model_dir, rows_name, max_length, mode, k, temperature in CASES:
        tokenizer = AutoTokenizer.from_pretrained(str(byo / model_dir))
        model = Model(byo / model_dir)
        prepared = trl_labels(data[rows_name], tokenizer, max_length, mode)
        untruncated = trl_labels(data[rows_name], tokenizer, None, mode)
        rows = []
        for i, r in enumerate(prepared):
            row: Dict[str, Any] = {"index": i, "input_ids": untruncated[i]["input_ids"]}
            targets = [] if r is None else [p for p in range(1, len(r["labels"])) if r["labels"][p] != -100]
            if not targets:
                row["dropped"] = True
                rows.append(row)
                continue
            logits = model.logits(r["input_ids"], [p - 1 for p in targets]).float()
            row.update(dropped=False, targets=targets,
                       **select(torch.log_softmax(logits / temperature, dim=-1), k))
            rows.append(row)
        cases.append({"name": name, "model": model_dir, "dataset": f"data/{rows_name}.jsonl",
                      "max_length": max_length, "truncation_mode": mode, "k": k,
                      "temperature": temperature, "rows": rows})
        print(f"{name}: {sum(not r['dropped'] for r in rows)} rows", file=sys.stderr)
    import trl

    expected = {"semantics": __doc__.split("Example::")[0].strip(),
                "versions": {"torch": torch.__version__, "trl": trl.__version__},
                "cases": cases, "ties": ties()}
    (byo / "expected-topk.json").write_text(json.dumps(expected, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
