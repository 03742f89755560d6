"""The fixture directories: the models saved and exported (format 1 and the split format 2), the
data sets, expected.json's cases, expected-embedding.json and tokenizer_check.json."""

from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from byo_fixtures import (CHATML_TEMPLATE, EOS, LLAMA3_TEMPLATE, SPLIT_DIRS, WIDE, FixtureError,
                          log)
from byo_fixtures.models import (build_models, build_wide_model, train_tokenizer,
                                 train_wide_tokenizer)
from byo_fixtures.oracles import (compute_expected, compute_expected_embedding,
                                  compute_wide_expected)
from byo_fixtures.text import (make_conversational_rows, make_corpus, make_embedding_rows,
                               make_skewed_rows, make_text_rows, make_wide_corpus)

TEMPLATES = {"llama": LLAMA3_TEMPLATE, "gpt2": CHATML_TEMPLATE, "encoder": None}
WIDE_SEED_OFFSET = 1_000_003


def write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def jsonl_bytes(rows: Sequence[Dict[str, Any]], compact: bool = False) -> bytes:
    separators = (",", ":") if compact else (", ", ": ")
    return "".join(json.dumps(r, ensure_ascii=False, separators=separators) + "\n"
                   for r in rows).encode("utf-8")


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _tokenizer_check(tokenizer: Any, strings: List[Tuple[str, str]]) -> Dict[str, Any]:
    seen: Dict[str, None] = {}
    cases = []
    for source, text in strings:
        if text in seen:
            continue
        seen[text] = None
        cases.append({"source": source, "text": text,
                      "with_special_tokens": tokenizer(text, add_special_tokens=True)["input_ids"],
                      "without_special_tokens": tokenizer(text, add_special_tokens=False)["input_ids"]})
    return {"tokenizer": "llama/tokenizer.json (gpt2/ and encoder/ hold the same file)",
            "cases": cases}


def _fixture_strings(data: Dict[str, List[Dict[str, Any]]], tokenizers: Dict[str, Any]) -> List[Tuple[str, str]]:
    strings: List[Tuple[str, str]] = [("edge", s) for s in ("", " ", "<s>", "a literal <s> in text",
                                                             "</s>", "<|im_start|>user\nhi<|im_end|>\n")]
    for i, r in enumerate(data["text"]):
        strings.append((f"text:{i}:prompt", r["prompt"]))
        for side in ("chosen", "rejected"):
            completion = r[side] if r[side].endswith(EOS) else r[side] + EOS
            strings.append((f"text:{i}:{side}", r[side]))
            strings.append((f"text:{i}:prompt+{side}+eos", r["prompt"] + completion))
    for name in ("llama", "gpt2"):
        tok = tokenizers[name]
        for i, r in enumerate(data["conversational"]):
            strings.append((f"chat:{name}:{i}:prompt", tok.apply_chat_template(
                r["prompt"], tokenize=False, add_generation_prompt=True)))
            for side in ("chosen", "rejected"):
                strings.append((f"chat:{name}:{i}:prompt+{side}", tok.apply_chat_template(
                    r["prompt"] + r[side], tokenize=False)))
    for i, r in enumerate(data["embedding"]):
        strings.append((f"embedding:{i}", r["text"]))
    return strings


def base_inputs(seed: int) -> Tuple[Dict[str, List[Dict[str, Any]]], Any, Dict[str, Any]]:
    """The data rows, tokenizer and models of llama/, gpt2/ and encoder/ for ``seed``."""
    rng = random.Random(seed)
    data = {"text": make_text_rows(rng), "conversational": make_conversational_rows(rng),
            "embedding": make_embedding_rows(rng)}
    tokenizer = train_tokenizer(make_corpus(rng))
    return data, tokenizer, build_models(tokenizer, seed)


def _save_hf(model: Any, tokenizer: Any, template: Optional[str], hf_dir: Path) -> None:
    model.save_pretrained(str(hf_dir))
    tokenizer.chat_template = template
    tokenizer.save_pretrained(str(hf_dir))


def _export(hf_dir: Path, target: Path, task: str, source: str, split: bool) -> None:
    import export_hf_model

    loaded = export_hf_model.load_model(str(hf_dir), task, log=log)
    loaded_tok = export_hf_model.load_tokenizer(str(hf_dir))
    export_hf_model.export(loaded, loaded_tok, target, task, source=source, max_check_length=64,
                           log=log, split=split)
    if split:
        meta = json.loads((target / "tensorcache-model.json").read_text(encoding="utf-8"))
        if meta["format_version"] != 2:
            raise FixtureError(f"{target.name} was exported as format {meta['format_version']}, "
                               "expected the split format 2")


def export_split_dirs(stage: Path, work: Path, tokenizer: Any, models: Dict[str, Any], seed: int) -> None:
    """llama and gpt2 exported again in format 2, to ``stage/<SPLIT_DIRS[name]>``."""
    for name, split_name in SPLIT_DIRS.items():
        hf_dir = work / f"hf-{name}"
        if not hf_dir.is_dir():
            _save_hf(models[name], tokenizer, TEMPLATES[name], hf_dir)
        _export(hf_dir, stage / split_name, "causal-lm",
                f"scripts/make_test_models.py --seed {seed} ({split_name})", split=True)


def build_wide(stage: Path, work: Path, seed: int) -> List[Dict[str, Any]]:
    """``stage/wide``, ``stage/data/skewed.jsonl``, and TRL's cases for them."""
    from transformers import AutoTokenizer

    import export_hf_model

    rng = random.Random(seed + WIDE_SEED_OFFSET)
    t0 = time.time()
    corpus, lexicon = make_wide_corpus(rng)
    tokenizer = train_wide_tokenizer(corpus)
    log(f"wide tokenizer: {len(tokenizer)} ids ({time.time() - t0:.1f} s)")
    rows = make_skewed_rows(rng, lexicon, tokenizer)
    model = build_wide_model(tokenizer, seed)
    hf_dir = work / f"hf-{WIDE}"
    _save_hf(model, tokenizer, CHATML_TEMPLATE, hf_dir)
    _export(hf_dir, stage / WIDE, "causal-lm", f"scripts/make_test_models.py --seed {seed} ({WIDE})",
            split=True)
    (stage / "data").mkdir(exist_ok=True)
    (stage / "data" / "skewed.jsonl").write_bytes(jsonl_bytes(rows))
    eager = export_hf_model.load_model(str(hf_dir), "causal-lm", log=log)
    return compute_wide_expected(eager, AutoTokenizer.from_pretrained(str(stage / WIDE)), rows,
                                 work, seed)


def generate_logits_fixtures(stage: Path, work: Path, seed: int, data: Dict[str, List[Dict[str, Any]]],
                              tokenizer: Any, models: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """llama/, gpt2/, encoder/ (format 1), data/, expected.json's cases, expected-embedding.json
    and tokenizer_check.json in ``stage``; returns (expected, embedding)."""
    from transformers import AutoTokenizer

    import export_hf_model
    import prepare_dataset

    tasks = {"llama": "causal-lm", "gpt2": "causal-lm", "encoder": "hidden-states"}
    eager: Dict[str, Any] = {}
    tokenizers: Dict[str, Any] = {}
    for name, model in models.items():
        hf_dir = work / f"hf-{name}"
        _save_hf(model, tokenizer, TEMPLATES[name], hf_dir)
        _export(hf_dir, stage / name, tasks[name], f"scripts/make_test_models.py --seed {seed} ({name})",
                split=False)
        eager[name] = export_hf_model.load_model(str(hf_dir), tasks[name], log=log)
        tokenizers[name] = AutoTokenizer.from_pretrained(str(stage / name))
    tokenizer_bytes = {(stage / n / "tokenizer.json").read_bytes() for n in models}
    if len(tokenizer_bytes) != 1:
        raise FixtureError("the three model directories hold different tokenizer.json files")

    data_dir = stage / "data"
    data_dir.mkdir()
    text_bytes = jsonl_bytes(data["text"])
    (data_dir / "text.jsonl").write_bytes(text_bytes)
    (data_dir / "text.jsonl.gz").write_bytes(gzip.compress(text_bytes, mtime=0))
    (data_dir / "conversational.jsonl").write_bytes(jsonl_bytes(data["conversational"]))
    (data_dir / "embedding.jsonl").write_bytes(jsonl_bytes(data["embedding"]))
    for name in ("llama", "gpt2"):
        prepare_dataset.prepare(stage / name, data_dir / "conversational.jsonl",
                                data_dir / f"conversational.{name}.jsonl", engine="trl", log=log)

    expected = compute_expected(eager, tokenizers, data, work, seed)
    tokens_rows = [{k: r[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")}
                   for r in next(c for c in expected["cases"] if c["name"] == "llama-tokens")["rows"]]
    (data_dir / "tokens.jsonl").write_bytes(jsonl_bytes(tokens_rows, compact=True))
    for name in ("llama", "gpt2"):
        prepared = read_jsonl(data_dir / f"conversational.{name}.jsonl")[1:]
        case = next(c for c in expected["cases"] if c["name"] == f"{name}-conversational")
        if prepared != [{k: r[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")} for r in case["rows"]]:
            raise FixtureError(f"conversational.{name}.jsonl differs from TRL's tokenization")
    embedding = compute_expected_embedding(eager["encoder"], tokenizers["encoder"], data["embedding"])
    write_json(stage / "expected-embedding.json", embedding)
    write_json(stage / "tokenizer_check.json",
                _tokenizer_check(tokenizers["llama"], _fixture_strings(data, tokenizers)))
    return expected, embedding
