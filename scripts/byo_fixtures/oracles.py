"""The reference values: log-probs computed by TRL's own DPOTrainer on the eager models, per
case, with the ids TRL used and its rules; and the eager encoder's masked-mean embeddings."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from byo_fixtures import (TRL_BATCH_SIZE, TRUNCATED_LENGTH, WIDE, WIDE_CASES, WIDE_EOS,
                          WIDE_MAX_POSITIONS, WIDE_PAD, WIDE_ROWS, WIDE_TOKENIZER_SIZE,
                          WIDE_VOCAB_SIZE, FixtureError, log)



def _dpo_config(work: Path, max_length: Optional[int], truncation_mode: str, seed: int) -> Any:
    from trl import DPOConfig

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # keep_end is deprecated in TRL 1.13
        return DPOConfig(
            output_dir=str(work / "trl-out"), report_to=[], per_device_train_batch_size=TRL_BATCH_SIZE,
            precompute_ref_log_probs=True, max_length=max_length, truncation_mode=truncation_mode,
            use_cpu=True, save_strategy="no", logging_strategy="no", seed=seed,
            dataloader_num_workers=0,
        )


def _trl_trainer(model: Any, tokenizer: Any, rows: List[Dict[str, Any]], work: Path,
                 max_length: Optional[int], truncation_mode: str, seed: int) -> Any:
    """TRL's DPOTrainer with precomputed reference log-probs on ``rows`` (plus an index column)."""
    from datasets import Dataset
    from trl import DPOTrainer

    dataset = Dataset.from_list([{**r, "index": i} for i, r in enumerate(rows)])
    return DPOTrainer(model=model, ref_model=None,
                      args=_dpo_config(work, max_length, truncation_mode, seed),
                      processing_class=tokenizer, train_dataset=dataset)


def _counted_tokens(trainer: Any, example: Dict[str, Any]) -> Tuple[int, int]:
    """Completion tokens that TRL sums over for one example, after its collator's truncation."""
    batch = trainer.data_collator([{k: example[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")}])
    counted = batch["completion_mask"][:, 1:].sum(dim=1).tolist()
    return int(counted[0]), int(counted[1])


def _case_rows(trainer: Any, ids: List[Dict[str, List[int]]]) -> List[Dict[str, Any]]:
    kept = {int(r["index"]): r for r in trainer.train_dataset}
    rows = []
    for i, tokenized in enumerate(ids):
        row: Dict[str, Any] = {"index": i}
        if i in kept:
            r = kept[i]
            for key in ("prompt_ids", "chosen_ids", "rejected_ids"):
                if list(r[key]) != tokenized[key]:
                    raise FixtureError(f"row {i}: TRL's {key} differ from prepare_dataset's")
            chosen_tokens, rejected_tokens = _counted_tokens(trainer, r)
            row.update(dropped=False, chosen_logp=float(r["ref_chosen_logps"]),
                       rejected_logp=float(r["ref_rejected_logps"]),
                       chosen_tokens=chosen_tokens, rejected_tokens=rejected_tokens)
        else:
            row.update(dropped=True, chosen_logp=0.0, rejected_logp=0.0, chosen_tokens=0,
                       rejected_tokens=0)
        row.update(tokenized)
        rows.append(row)
    return rows


def _tokenized(rows: List[Dict[str, Any]], tokenizer: Any) -> List[Dict[str, List[int]]]:
    import dataset_tokens

    conversational = isinstance(rows[0]["prompt"], list)
    out, _ = dataset_tokens.tokenize_rows(rows, tokenizer, conversational, engine="trl")
    builtin, _ = dataset_tokens.tokenize_rows(rows, tokenizer, conversational, engine="builtin")
    clean = [{k: [int(x) for x in r[k]] for k in ("prompt_ids", "chosen_ids", "rejected_ids")} for r in out]
    if clean != [{k: list(r[k]) for k in clean[0]} for r in builtin]:
        raise FixtureError("prepare_dataset's built-in rules disagree with TRL's own tokenization")
    return clean


SEMANTICS = (
    "TRL {trl} DPOTrainer (precompute_ref_log_probs=True). Tokenization: a text row's chosen and "
    "rejected each get tokenizer.eos_token appended as text unless the string already ends with it; "
    "conversational rows get nothing appended (the chat template closes the turn). The prompt and "
    "prompt+completion are tokenized separately: text with the tokenizer's defaults "
    "(add_special_tokens=True, so prompt_ids start with the BOS <s> added by the post-processor, "
    "and the completion ids carry no BOS); conversations with "
    "apply_chat_template(tokenize=True, add_special_tokens=False), the prompt with "
    "add_generation_prompt=True and prompt+completion as one conversation without it (any BOS "
    "comes from the template text). completion_ids = ids(prompt+completion)[len(prompt_ids):] even "
    "when ids(prompt) is not a prefix of ids(prompt+completion) (TRL only warns); the model sees "
    "prompt_ids + completion_ids. Truncation (collator, per sequence, when max_length is set): "
    "keep_start keeps the first max_length tokens of prompt_ids+completion_ids, keep_end the last "
    "max_length (the prompt goes first; position ids restart at 0). Rows with "
    "len(prompt_ids) >= max_length are dropped under keep_start only (dropped=true here); keep_end "
    "drops nothing. The value is the sum over positions t >= 1 of the truncated, right-padded "
    "sequence whose token is a completion token of log_softmax(logits[t-1])[token t]; a completion "
    "token left at position 0 by keep_end is not counted; *_tokens is that count. Batches are "
    "right-padded with pad_token_id (a tokenizer without a pad token gets eos as pad), attention_mask "
    "1 on real tokens; TRL sums float32 per-token log-probs."
)


def compute_expected(models: Dict[str, Any], tokenizers: Dict[str, Any], data: Dict[str, List[Dict[str, Any]]],
                     work: Path, seed: int) -> Dict[str, Any]:
    """Reference log-probs from TRL's DPOTrainer for every case."""
    import trl
    from datasets import Dataset
    from trl import DPOTrainer

    ids = {(m, d): _tokenized(data[d], tokenizers[m])
           for m in ("llama", "gpt2") for d in ("text", "conversational")}
    cases: List[Dict[str, Any]] = []
    specs = [
        ("llama", "text", None, "keep_start"), ("gpt2", "text", None, "keep_start"),
        ("llama", "conversational", None, "keep_start"), ("gpt2", "conversational", None, "keep_start"),
        ("llama", "text", TRUNCATED_LENGTH, "keep_start"), ("llama", "text", TRUNCATED_LENGTH, "keep_end"),
    ]
    for model_name, dataset, max_length, mode in specs:
        t0 = time.time()
        trainer = _trl_trainer(models[model_name], tokenizers[model_name], data[dataset], work,
                               max_length, mode, seed)
        suffix = "" if max_length is None else f"-{mode}-{max_length}"
        cases.append({"name": f"{model_name}-{dataset}{suffix}", "model": model_name,
                      "dataset": f"data/{dataset}.jsonl", "format": dataset,
                      "max_length": max_length, "truncation_mode": mode,
                      "rows": _case_rows(trainer, ids[(model_name, dataset)])})
        log(f"expected: {cases[-1]['name']} ({time.time() - t0:.1f} s)")

    # Pre-tokenized rows: TRL 1.13's dataset preparation needs prompt/chosen/rejected, so a
    # tokenized-only data set is fed to the trainer's own reference pass (_precompute_ref_logps,
    # the call DPOTrainer makes in __init__) with the same collator.
    tokens = ids[("llama", "text")]
    tokens_ds = Dataset.from_list([{**r, "index": i} for i, r in enumerate(tokens)])
    try:
        DPOTrainer(model=models["llama"], ref_model=None,
                   args=_dpo_config(work, None, "keep_start", seed),
                   processing_class=tokenizers["llama"], train_dataset=tokens_ds)
        note = "TRL accepted the tokenized-only data set directly"
    except Exception as e:  # noqa: BLE001 - the failure itself is what is recorded
        note = (f"TRL {trl.__version__} DPOTrainer rejects a data set with only "
                f"prompt_ids/chosen_ids/rejected_ids ({type(e).__name__}: {e}); values come from "
                "the trainer's own _precompute_ref_logps on those columns and equal llama-text")
    # (each DPOTrainer resets accelerate's state, so the trainer that runs the pass is made last)
    text_trainer = _trl_trainer(models["llama"], tokenizers["llama"], data["text"], work, None,
                                "keep_start", seed)
    text_trainer.train_dataset = text_trainer._precompute_ref_logps(tokens_ds, "tokens", TRL_BATCH_SIZE)
    case = {"name": "llama-tokens", "model": "llama", "dataset": "data/tokens.jsonl", "format": "tokens",
            "max_length": None, "truncation_mode": "keep_start",
            "rows": _case_rows(text_trainer, tokens), "note": note}
    reference = cases[0]["rows"]
    for a, b in zip(case["rows"], reference):
        for key in ("chosen_logp", "rejected_logp"):
            if abs(a[key] - b[key]) > 1e-4 * max(1.0, abs(b[key])):
                raise FixtureError(f"llama-tokens row {a['index']} {key} {a[key]} != llama-text {b[key]}")
    cases.append(case)
    return {"format_version": 1, "trl_version": trl.__version__,
            "semantics": SEMANTICS.format(trl=trl.__version__), "cases": cases}


SPLIT_NOTE = (
    "split_dirs maps a model of `cases` to a directory holding the same weights and tokenizer files "
    "exported in format 2 (body.pt + head.pt instead of model.pt): every case of that model holds "
    "for that directory too, with the same data sets (data/conversational.<model>.jsonl keeps the "
    "model's own name). split_cases have the structure of `cases` but their model directories "
    "exist only in format 2, so they are kept out of `cases`. The wide model (Qwen2, hidden 32, 2 "
    "layers, 4 heads, 2 key/value heads, tied {vocab}-wide head, {positions} positions) has a "
    "{tokenizer}-id Qwen-like byte-level BPE tokenizer: no BOS is added, eos_token {eos} is what "
    "text completions get appended, pad_token {pad}; data/skewed.jsonl holds {rows} text rows of "
    "log-normal lengths. Everything else follows `semantics`."
)


def compute_wide_expected(model: Any, tokenizer: Any, rows: List[Dict[str, Any]], work: Path,
                          seed: int) -> List[Dict[str, Any]]:
    """Reference log-probs from TRL's DPOTrainer for the wide model on the skewed rows."""
    ids = _tokenized(rows, tokenizer)
    cases = []
    for max_length, mode in WIDE_CASES:
        t0 = time.time()
        trainer = _trl_trainer(model, tokenizer, rows, work, max_length, mode, seed)
        cases.append({"name": f"{WIDE}-skewed-{mode}-{max_length}", "model": WIDE,
                      "dataset": "data/skewed.jsonl", "format": "text", "max_length": max_length,
                      "truncation_mode": mode, "rows": _case_rows(trainer, ids)})
        del trainer
        log(f"expected: {cases[-1]['name']} ({time.time() - t0:.1f} s)")
    return cases


def split_expected(split_dirs: Dict[str, str], split_cases: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The keys expected.json gets for the format 2 fixtures."""
    return {
        "split_dirs": dict(split_dirs),
        "split_note": SPLIT_NOTE.format(vocab=WIDE_VOCAB_SIZE, positions=WIDE_MAX_POSITIONS,
                                        tokenizer=WIDE_TOKENIZER_SIZE, eos=WIDE_EOS, pad=WIDE_PAD,
                                        rows=WIDE_ROWS),
        "split_cases": split_cases,
    }


def compute_expected_embedding(encoder: Any, tokenizer: Any, rows: List[Dict[str, str]]) -> Dict[str, Any]:
    """Masked-mean last hidden states of the eager encoder, one text at a time."""
    import torch

    out = []
    with torch.no_grad():
        for i, row in enumerate(rows):
            enc = tokenizer(row["text"], return_tensors="pt")
            hidden = encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1)
            out.append({"index": i, "ids": enc["input_ids"][0].tolist(),
                        "embedding": [float(x) for x in mean[0].tolist()]})
    return {"model": "encoder", "dataset": "data/embedding.jsonl",
            "hidden_size": int(encoder.config.hidden_size),
            "pooling": "mean of last_hidden_state over positions with attention_mask 1; tokenizer "
                       "defaults (special tokens added), no truncation",
            "rows": out}
