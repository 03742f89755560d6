"""Preference rows tokenized as TRL's DPOTrainer prepares them: with TRL's own code when it is
installed, else with a built-in copy of TRL 1.13's rules (see ``prepare_dataset.py``)."""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List, Optional, Tuple

from dataset_source import PrepareError

TRL_SEMANTICS = "1.13"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _trl_rows(rows: List[Dict[str, Any]], tokenizer: Any) -> List[Dict[str, List[int]]]:
    """Tokenize with TRL's own ``DPOTrainer._prepare_dataset`` (no max_length: nothing dropped)."""
    from types import SimpleNamespace

    import datasets
    from trl import DPOTrainer

    datasets.disable_progress_bars()
    # every field any row has, as datasets' own readers make columns (from_list would keep only
    # the first row's fields and lose a "tools" that the first row lacks)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    dataset = datasets.Dataset.from_dict({k: [row.get(k) for row in rows] for k in keys})
    trainer_view = SimpleNamespace(_tokenizer=tokenizer)
    args = SimpleNamespace(dataset_num_proc=None, max_length=None, truncation_mode="keep_start")
    prepared = DPOTrainer._prepare_dataset(trainer_view, dataset, tokenizer, args, "input")
    if len(prepared) != len(rows):
        raise RuntimeError(f"TRL returned {len(prepared)} rows for {len(rows)}")
    columns = prepared.select_columns(["prompt_ids", "chosen_ids", "rejected_ids"])
    return [dict(r) for r in columns]


def _extract_prompt(chosen: Any, rejected: Any) -> Tuple[Any, Any, Any]:
    """TRL 1.13 ``extract_prompt``: the longest common prefix of chosen and rejected."""
    idx = 0
    for idx in range(min(len(chosen), len(rejected))):
        if chosen[idx] != rejected[idx]:
            if chosen[idx - 1] == " ":  # remove the space before the completion
                idx -= 1
            break
    return chosen[:idx], chosen[idx:], rejected[idx:]


def _builtin_rows(rows: List[Dict[str, Any]], tokenizer: Any,
                  conversational: bool) -> List[Dict[str, List[int]]]:
    """TRL 1.13's DPO dataset preparation re-stated with transformers alone."""
    eos = tokenizer.eos_token
    out = []
    for row in rows:
        if "prompt" in row:
            prompt, chosen, rejected = row["prompt"], row["chosen"], row["rejected"]
        else:
            prompt, chosen, rejected = _extract_prompt(row["chosen"], row["rejected"])
        if conversational:
            tools = row.get("tools")
            tools = json.loads(tools) if isinstance(tools, str) else tools
            kwargs = {"tools": tools, **(row.get("chat_template_kwargs") or {})}

            def encode(messages: List[Dict[str, Any]], generation_prompt: bool = False) -> List[int]:
                extra = {"add_generation_prompt": True} if generation_prompt else {}
                result = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True,
                                                       **extra, **kwargs)
                return list(result["input_ids"])

            prompt_ids = encode(prompt, generation_prompt=True)
            chosen_full = encode(prompt + chosen)
            rejected_full = encode(prompt + rejected)
        else:
            if eos is None:
                raise PrepareError("the tokenizer has no eos_token; TRL appends it to text completions")
            chosen = chosen if chosen.endswith(eos) else chosen + eos
            rejected = rejected if rejected.endswith(eos) else rejected + eos
            prompt_ids = list(tokenizer(text=prompt)["input_ids"])
            chosen_full = list(tokenizer(text=prompt + chosen)["input_ids"])
            rejected_full = list(tokenizer(text=prompt + rejected)["input_ids"])
        n = len(prompt_ids)
        out.append({"prompt_ids": prompt_ids, "chosen_ids": chosen_full[n:],
                    "rejected_ids": rejected_full[n:]})
    return out


def _trl_available() -> Optional[str]:
    try:
        import trl
    except ImportError:
        return None
    return str(getattr(trl, "__version__", "unknown"))


def tokenize_rows(rows: List[Dict[str, Any]], tokenizer: Any, conversational: bool,
                  engine: str = "auto", log: Any = _stderr) -> Tuple[List[Dict[str, List[int]]], str]:
    """Tokenize checked rows; return (tokenized rows, TRL semantics version used).

    ``engine`` is ``trl`` (TRL's own code), ``builtin`` (the copy of TRL 1.13's rules) or
    ``auto`` (TRL when importable).
    """
    trl_version = _trl_available()
    if engine == "trl" and trl_version is None:
        raise PrepareError("--engine trl: the trl package is not importable")
    if engine in ("trl", "auto") and trl_version is not None:
        semantics = ".".join(trl_version.split(".")[:2])
        if semantics != TRL_SEMANTICS:
            log(f"note: trl {trl_version} is installed; its tokenization is used, recorded as "
                f"trl_semantics {semantics} (this script was written against {TRL_SEMANTICS})")
        return _trl_rows(rows, tokenizer), semantics
    if engine == "auto":
        log(f"note: trl is not installed; using the built-in copy of TRL {TRL_SEMANTICS}'s "
            "tokenization rules (transformers only)")
    return _builtin_rows(rows, tokenizer, conversational), TRL_SEMANTICS
