#!/usr/bin/env python3
"""A plain eager-PyTorch distillation teacher, timed: what ``bench --only distill`` puts
TensorCache's teacher fill next to.

What a user writes without a cache: load the Hugging Face model, and for each batch of tokenized
rows ``{"input_ids", "completion_mask"}`` (padded on the right to the batch's longest) run the
forward pass, take the logits at the positions that predict the completion tokens, and keep for
each of them the top-K of ``log_softmax(logits / T)`` and the log of the mass outside them, in
float32, with ``torch.set_num_threads(N)`` and no gradients.

``write-rows`` makes those rows from text preference rows (prompt, then the chosen completion and
EOS, tokenized by the model's tokenizer), so that both sides see the same tokens.

Output of ``run``: one JSON object on stdout (also to ``--out``): rows, completion tokens,
seconds, tokens per second, peak resident memory and versions.

Example::

    python scripts/bench_teacher.py write-rows --hf-dir m/wide/hf --dataset prefs.jsonl --out rows.jsonl
    python scripts/bench_teacher.py run --hf-dir m/wide/hf --rows rows.jsonl --k 64 --batch-size 1 --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from trl_timing import max_rss_bytes

EXIT_OK, EXIT_BAD_INPUT = 0, 2


class BadInput(Exception):
    """A file or an option that cannot be used; exit code 2."""


def write_rows(hf_dir: str, dataset: str, out: str) -> int:
    """Tokenized completion rows of ``dataset``'s prompt and chosen completion; how many."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(hf_dir)
    n = 0
    try:
        src = open(dataset, encoding="utf-8")
    except OSError as e:
        raise BadInput(f"cannot read --dataset '{dataset}': {e.strerror or e}") from e
    with src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            if not line.strip():
                continue
            row = json.loads(line)
            prompt = tok(row["prompt"], add_special_tokens=False)["input_ids"]
            completion = tok(row["chosen"], add_special_tokens=False)["input_ids"]
            completion.append(tok.eos_token_id)
            ids = prompt + completion
            mask = [0] * len(prompt) + [1] * len(completion)
            dst.write(json.dumps({"input_ids": ids, "completion_mask": mask}) + "\n")
            n += 1
    if n == 0:
        raise BadInput(f"--dataset '{dataset}' has no rows")
    return n


def read_rows(path: str) -> List[Dict[str, List[int]]]:
    rows = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise BadInput(f"cannot read --rows '{path}': {e.strerror or e}") from e
    with f:
        for n, line in enumerate(f, 1):
            if line.strip():
                row = json.loads(line)
                if not any(row["completion_mask"][1:]):
                    raise BadInput(f"{path} line {n}: no completion token to predict")
                rows.append(row)
    if not rows:
        raise BadInput(f"--rows '{path}' has no rows")
    return rows


def teacher(model, rows, k: int, temperature: float, batch_size: int):  # type: ignore[no-untyped-def]
    """The top-K per completion token of every row: (ids, log-probs, tails) per row."""
    import torch

    out = []
    for start in range(0, len(rows), batch_size):
        batch = rows[start:start + batch_size]
        longest = max(len(r["input_ids"]) for r in batch)
        ids = torch.zeros((len(batch), longest), dtype=torch.long)
        attention = torch.zeros((len(batch), longest), dtype=torch.long)
        for i, r in enumerate(batch):
            ids[i, :len(r["input_ids"])] = torch.tensor(r["input_ids"])
            attention[i, :len(r["input_ids"])] = 1
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=attention).logits.float()
        for i, r in enumerate(batch):
            mask = torch.tensor(r["completion_mask"][1:], dtype=torch.bool)
            at = logits[i, :len(r["input_ids"]) - 1][mask]  # position p - 1 predicts token p
            logps = torch.log_softmax(at / temperature, dim=-1)
            top, top_ids = torch.topk(logps, k, dim=-1)
            inside = torch.logsumexp(top, dim=-1)
            tail = torch.log1p(-torch.exp(inside).clamp(max=1.0))
            out.append((top_ids, top, tail))
    return out


def run(hf_dir: str, rows_file: str, k: int, temperature: float, batch_size: int, threads: int,
        warmup_rows: int) -> Dict[str, Any]:
    if k < 1 or batch_size < 1 or threads < 1 or warmup_rows < 0 or not temperature > 0:
        raise BadInput(f"--k {k}, --batch-size {batch_size}, --threads {threads}, --warmup-rows "
                       f"{warmup_rows}, --temperature {temperature}: expected k, batch size and "
                       "threads >= 1, warm-up rows >= 0 and a temperature > 0")
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(threads)
    rows = read_rows(rows_file)
    model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32).eval()
    if k > model.config.vocab_size:
        raise BadInput(f"--k {k} is above the model's vocabulary size {model.config.vocab_size}")
    if warmup_rows:
        teacher(model, rows[:warmup_rows], k, temperature, batch_size)
    t0 = time.perf_counter()
    values = teacher(model, rows, k, temperature, batch_size)
    seconds = time.perf_counter() - t0
    tokens = sum(int(v[0].shape[0]) for v in values)
    return {"rows": len(rows), "completion_tokens": tokens, "k": k, "batch_size": batch_size,
            "threads": threads, "seconds": seconds, "tokens_per_s": tokens / seconds,
            "rows_per_s": len(rows) / seconds, "peak_rss_mib": max_rss_bytes() / 2**20,
            "torch": torch.__version__, "transformers": transformers.__version__}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write-rows", help="tokenized completion rows from text preference rows")
    w.add_argument("--hf-dir", required=True, metavar="DIR", help="the Hugging Face model")
    w.add_argument("--dataset", required=True, metavar="FILE", help="prompt/chosen/rejected JSONL")
    w.add_argument("--out", required=True, metavar="FILE", help="the rows to write")
    r = sub.add_parser("run", help="time the eager teacher over the rows")
    r.add_argument("--hf-dir", required=True, metavar="DIR", help="the Hugging Face model")
    r.add_argument("--rows", required=True, metavar="FILE", help="write-rows' output")
    r.add_argument("--k", type=int, default=64, help="ids kept per token (default: 64)")
    r.add_argument("--temperature", type=float, default=1.0, help="default: 1")
    r.add_argument("--batch-size", type=int, default=1, metavar="B", help="rows per forward pass")
    r.add_argument("--threads", type=int, required=True, metavar="N", help="torch threads")
    r.add_argument("--warmup-rows", type=int, default=0, metavar="K",
                   help="rows run once before the timed run")
    r.add_argument("--out", metavar="FILE", help="also write the JSON result here")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "write-rows":
            print(json.dumps({"rows": write_rows(args.hf_dir, args.dataset, args.out)}))
            return EXIT_OK
        result = run(args.hf_dir, args.rows, args.k, args.temperature, args.batch_size,
                     args.threads, args.warmup_rows)
    except BadInput as e:
        print(f"bench_teacher: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
