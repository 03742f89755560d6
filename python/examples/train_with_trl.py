#!/usr/bin/env python3
"""DPO with TRL, the reference log-probs taken from a TensorCache cache.

    python python/examples/train_with_trl.py --model models/hf --dataset prefs.jsonl \\
        --tensorcache data/<cache-id>/export.safetensors      # or HOST:PORT/<cache-id>

``--model`` is the checkpoint the cache was filled from (a directory or a hub name); the policy
starts from it, as the reference does. The rows are read with ``datasets`` (JSON lines, Parquet,
Arrow, or a ``save_to_disk`` folder). The cache must have been filled from these rows, this
model and this ``--max-length``/``--truncation-mode``: otherwise the trainer refuses to start and
names what differs.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def load_rows(path: str, split: str):  # type: ignore[no-untyped-def]
    from datasets import load_dataset, load_from_disk

    p = Path(path)
    if p.is_dir():
        loaded = load_from_disk(str(p))
        return loaded[split] if hasattr(loaded, "keys") else loaded
    kind = {".parquet": "parquet", ".arrow": "arrow"}.get(p.suffix, "json")
    return load_dataset(kind, data_files=str(p), split="train")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the reference checkpoint (dir or hub name)")
    parser.add_argument("--dataset", required=True, help="the rows the cache was filled from")
    parser.add_argument("--split", default="train", help="split of a save_to_disk folder")
    parser.add_argument("--tensorcache", required=True,
                        help="an export file, or HOST:PORT[,HOST:PORT...]/CACHE-ID")
    parser.add_argument("--max-length", type=int, default=1024, help="as the fill's (default 1024)")
    parser.add_argument("--truncation-mode", default="keep_start", help="as the fill's")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--output-dir", default="dpo-out")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig

    from tensorcache.trl import DPOTrainer

    model = AutoModelForCausalLM.from_pretrained(args.model)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    config = DPOConfig(output_dir=args.output_dir, precompute_ref_log_probs=True,
                       max_length=args.max_length, truncation_mode=args.truncation_mode,
                       max_steps=args.steps, per_device_train_batch_size=4, logging_steps=5,
                       report_to=[], save_strategy="no", use_cpu=not torch.cuda.is_available(),
                       bf16=torch.cuda.is_available())  # TRL's default bf16 means autocast on CPU too
    trainer = DPOTrainer(model, args=config, train_dataset=load_rows(args.dataset, args.split),
                         processing_class=tokenizer, tensorcache=args.tensorcache)
    trainer.train()


if __name__ == "__main__":
    main()
