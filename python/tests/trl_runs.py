"""TRL runs for the tensorcache.trl tests: a seeded tiny Llama as a Hugging Face checkpoint, its
TensorCache export, and DPO training with TRL's own precompute or with the cache's values."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from conftest import ROOT, launcher

sys.path.insert(0, str(ROOT / "scripts"))

MAX_LENGTH = 128  # the text rows' long prompt fills it: TRL drops that row under keep_start
STEPS = 8
SEED = 11
# TRL's default optimizer (AdamW) at a rate that moves the losses. bf16 is off: TRL's default
# bf16=True runs the training forward on CPU under bfloat16 autocast, whose rounding flips with any
# change of the parameters, so two runs whose reference values differ in the last float32 bits
# drift apart by 1e-4 after one step (measured); in float32 they stay within 1e-6.
OPTIMIZER = "adamw_torch"
LEARNING_RATE = 1e-3


def quiet() -> None:
    """No progress bars, TRL's per-row tokenizer warnings off, one torch thread."""
    import make_test_models

    make_test_models._quiet()


def make_checkpoint(out: Path, seed: int = SEED) -> Dict[str, List[Dict[str, Any]]]:
    """A Hugging Face Llama checkpoint with its tokenizer and chat template under ``out``; returns
    the seeded text and conversational rows."""
    from byo_fixtures import LLAMA3_TEMPLATE
    from byo_fixtures.models import train_tokenizer
    from byo_fixtures.text import make_conversational_rows, make_corpus, make_text_rows

    rng = random.Random(seed)
    rows = {"text": make_text_rows(rng), "conversational": make_conversational_rows(rng)}
    tokenizer = train_tokenizer(make_corpus(rng))
    model = llama(tokenizer, seed)
    model.save_pretrained(str(out))
    tokenizer.chat_template = LLAMA3_TEMPLATE
    tokenizer.save_pretrained(str(out))
    return rows


def llama(tokenizer: Any, seed: int) -> Any:
    """A tiny Llama at its default initialization (the parity fixtures scale theirs up for
    informative log-probs; training needs no such thing)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    return LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id)).eval()


def write_jsonl(path: Path, rows: List[Dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def run_tool(args: List[str], cwd: Path = ROOT) -> str:
    """Runs ``./tensorcache ARGS`` (or a script when ARGS starts with python3); returns its output."""
    if args[0] == "python3":
        done = subprocess.run([sys.executable] + args[1:], cwd=cwd, capture_output=True, text=True,
                              timeout=900)
    else:
        p = launcher(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = p.communicate(timeout=900)
        done = subprocess.CompletedProcess(args, p.returncode, out, "")
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@dataclass
class Run:
    """What a training run showed: the reference columns after TRL's processing, the loss of every
    step, and the model's forward calls with and without gradients (reference forwards run
    without)."""

    ref_chosen: List[float]
    ref_rejected: List[float]
    losses: List[float]
    rows: int
    forwards: Dict[bool, int] = field(default_factory=lambda: {True: 0, False: 0})
    forwards_at_init: Dict[bool, int] = field(default_factory=dict)


def dpo_config(out: Path, max_length: Optional[int] = MAX_LENGTH) -> Any:
    from trl import DPOConfig

    return DPOConfig(output_dir=str(out), per_device_train_batch_size=2, max_steps=STEPS,
                     learning_rate=LEARNING_RATE, optim=OPTIMIZER, logging_steps=1, report_to=[], seed=SEED,
                     precompute_ref_log_probs=True, max_length=max_length, use_cpu=True, bf16=False,
                     save_strategy="no", disable_tqdm=True, dataloader_num_workers=0)


def train(hf_dir: Path, rows: List[Dict[str, Any]], out: Path, tensorcache: Optional[str] = None,
          **kwargs: Any) -> Run:
    """DPO for STEPS steps from ``hf_dir`` on ``rows``: TRL's own precompute, or with
    ``tensorcache`` the values of that cache through tensorcache.trl."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    quiet()
    model = AutoModelForCausalLM.from_pretrained(str(hf_dir), dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(hf_dir))
    forwards = {True: 0, False: 0}

    def count(*_: Any) -> None:
        forwards[torch.is_grad_enabled()] += 1

    model.register_forward_hook(count)
    perturb = kwargs.pop("perturb", None)
    if perturb is not None:
        perturb(model)
    dataset = Dataset.from_list(rows)
    args = dpo_config(out, kwargs.pop("max_length", MAX_LENGTH))
    if tensorcache is None:
        from trl import DPOTrainer
        trainer = DPOTrainer(model, args=args, train_dataset=dataset, processing_class=tokenizer)
    else:
        from tensorcache.trl import DPOTrainer
        trainer = DPOTrainer(model, args=args, train_dataset=dataset, processing_class=tokenizer,
                             tensorcache=tensorcache, **kwargs)
    at_init = dict(forwards)
    losses: List[float] = []
    compute_loss = trainer.compute_loss

    def recorded(*a: Any, **kw: Any) -> Any:  # the exact loss of each step, not the logged rounding
        out = compute_loss(*a, **kw)
        losses.append(float((out[0] if isinstance(out, tuple) else out).detach()))
        return out

    trainer.compute_loss = recorded
    trainer.train()
    ds = trainer.train_dataset
    return Run([float(v) for v in ds["ref_chosen_logps"]],
               [float(v) for v in ds["ref_rejected_logps"]], losses, len(ds), forwards, at_init)
