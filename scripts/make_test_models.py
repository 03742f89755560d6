#!/usr/bin/env python3
"""Generate the "bring your own model" test fixtures: tiny seeded models, data sets and oracles.

Everything is built locally and deterministically from ``--seed`` (nothing is downloaded):

* a byte-level BPE tokenizer trained on a seeded synthetic corpus (with accents, CJK and emoji),
  whose post-processor prepends ``<s>`` when special tokens are added;
* a tiny Llama (Llama-3-style chat template) and a tiny GPT-2 (ChatML template), exported with
  ``export_hf_model.export`` in the logits-only format (``model.pt``) to ``OUT/llama`` and
  ``OUT/gpt2``, and a tiny BERT encoder exported with task ``hidden-states`` to ``OUT/encoder``;
* the same Llama and GPT-2 exported in the split format (``body.pt`` + ``head.pt``) to
  ``OUT/llama-split`` and ``OUT/gpt2-split``;
* ``OUT/wide``: a tiny Qwen2 with a 32,768-wide head and a 32,000-id Qwen-like tokenizer trained on
  a seeded pseudo-word corpus, in the split format, and ``OUT/data/skewed.jsonl``: text preference
  rows whose prompt and completion lengths are log-normal;
* preference data sets under ``OUT/data`` (text, conversational, pre-tokenized, gzip) and the
  conversational ones prepared by ``prepare_dataset.prepare`` for each language model;
* ``OUT/expected.json``: reference log-probs computed by TRL's own ``DPOTrainer`` with
  ``precompute_ref_log_probs=True`` on the eager transformers models, for several truncation
  settings (``cases``; ``split_dirs`` names the split copies of their models and
  ``split_cases`` holds the wide model's cases); ``OUT/expected-embedding.json``: masked-mean
  embeddings of the eager encoder; ``OUT/tokenizer_check.json``: Python token ids of every fixture
  string.

Before anything is put in place, every expected value is recomputed independently from the
exported files (``model.pt``: right-padded batches, sum of log-softmax over completion tokens;
``body.pt`` + ``head.pt``: the same with the head applied only at scored positions), the split
copies are checked against ``model.pt``, and the run fails if any value differs by more than
1e-4 * max(1, |value|).

``--only split,wide`` rebuilds just the split fixtures inside an existing ``OUT`` (their
directories, ``data/skewed.jsonl``, the split keys of ``expected.json`` and ``README.md``) and
leaves every other file untouched.

Example::

    python scripts/make_test_models.py --out model-runner/src/test/resources/byo
    python scripts/make_test_models.py --out model-runner/src/test/resources/byo --only split,wide
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_SEED = 20261123
VOCAB_SIZE = 800
MAX_POSITIONS = 1024
WEIGHT_SCALE = 8.0  # random init gives near-uniform logits; scaled weights make log-probs informative
TRUNCATED_LENGTH = 24
# The split (format 2) copies of llama/ and gpt2/, and the wide-vocabulary Qwen2 model.
SPLIT_DIRS = {"llama": "llama-split", "gpt2": "gpt2-split"}
WIDE = "wide"
WIDE_TOKENIZER_SIZE = 32000
WIDE_VOCAB_SIZE = 32768  # the model's head is wider than the tokenizer, as in real checkpoints
WIDE_MAX_POSITIONS = 4096
WIDE_SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
WIDE_PAD, WIDE_EOS = "<|endoftext|>", "<|im_end|>"
WIDE_ROWS = 48
WIDE_CASES = [(1024, "keep_start"), (512, "keep_end"), (512, "keep_start")]
NEW_PARTS = ("split", "wide")
TRL_BATCH_SIZE = 4
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>",
                  "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
PAD, BOS, EOS = "<pad>", "<s>", "</s>"

LLAMA3_TEMPLATE = (
    "{{- bos_token }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim"
    " + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)
CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- endif %}"
)

WORDS = (
    "the a an cat dog sat on mat moon ran fast slow red blue green big small house tree river "
    "question answer yes no why how what when where model token code test value data cache "
    "one two three four five six seven eight nine ten hello world good bad sky sun rain is are "
    "was were be to of and in that it for with as at by from this not but or which you we they "
    "train batch loss step reference policy chosen rejected prompt reply because therefore"
).split()
FOREIGN_WORDS = (
    "café naïve élève déjà où très été garçon über schön Straße grün mañana niño año señor "
    "canción ação coração Ελλάδα привет мир 日本語 東京 首都 です 川 大きな 日本 はい "
    "わかりました 中文 你好 世界 谢谢 한국어 안녕 🍕 😋 👍 👎 🙂 🚀 ✓ — … « » € £ ¿ ¡"
).split()
PUNCTUATION = [".", "?", "!", ",", ":", ";"]


class FixtureError(Exception):
    """Bad arguments, or fixtures that fail their own cross-checks; exit code 2."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------


def _sentence(rng: random.Random, n_min: int, n_max: int, foreign: float = 0.15) -> str:
    words = []
    for _ in range(rng.randint(n_min, n_max)):
        pool = FOREIGN_WORDS if rng.random() < foreign else WORDS
        words.append(rng.choice(pool))
    s = " ".join(words)
    if rng.random() < 0.5:
        s = s[:1].upper() + s[1:] + rng.choice(PUNCTUATION)
    if rng.random() < 0.1:
        s += " " + str(rng.randint(0, 99999))
    return s


def _paragraph(rng: random.Random, n_words: int) -> str:
    parts: List[str] = []
    count = 0
    while count < n_words:
        s = _sentence(rng, 4, 16, foreign=0.1)
        parts.append(s)
        count += len(s.split())
    return " ".join(parts)


def make_corpus(rng: random.Random) -> List[str]:
    """The tokenizer training corpus: seeded sentences and a few structured strings."""
    corpus = [_sentence(rng, 3, 18) for _ in range(3000)]
    return corpus + ["tabs\tand\nnewlines\n\tindented", "Q: what is 2+2?\nA: 4",
                     "def f(x):\n\treturn x", "Hello, world! Bonjour le monde. こんにちは世界。"]


def make_text_rows(rng: random.Random) -> List[Dict[str, str]]:
    """Text preference rows covering the tokenization edge cases."""
    long_prompt = "Summarize the following notes.\n" + _paragraph(rng, 470)
    long_chosen = " " + _paragraph(rng, 50)
    long_rejected = " " + _paragraph(rng, 20)
    return [
        {"prompt": "The cat sat on the", "chosen": " mat.", "rejected": " moon."},
        {"prompt": "Q: what is 2+2?\nA:", "chosen": " 4", "rejected": " five, or maybe 22"},
        {"prompt": "Décris un café à Paris :", "chosen": " un petit café crème, très naïf et élégant.",
         "rejected": " rien."},
        {"prompt": "日本語で答えてください。東京は", "chosen": "日本の首都です。", "rejected": "大きな川です。"},
        {"prompt": "How was the pizza? 🍕", "chosen": " Delicious 😋👍 — merci!",
         "rejected": " Bad 👎"},
        {"prompt": "Is the sky blue?", "chosen": " Yes, it is." + EOS, "rejected": " No."},
        {"prompt": "Code:\n\tdef f(x):\n\t\treturn x", "chosen": "\n\tprint(f(1))\n",
         "rejected": "\t\t# nothing\n\n"},
        {"prompt": long_prompt, "chosen": long_chosen, "rejected": long_rejected},
        {"prompt": "Read this and answer with one word: " + _paragraph(rng, 30) + "\nAnswer:",
         "chosen": " yes", "rejected": " no"},
        {"prompt": "Count:", "chosen": " " + _paragraph(rng, 40), "rejected": " one two three"},
        {"prompt": "", "chosen": "Hello world.", "rejected": "Goodbye, cruel world… ¿qué?"},
        {"prompt": "The answer is: ", "chosen": "yes", "rejected": "no"},
    ]


def make_conversational_rows(rng: random.Random) -> List[Dict[str, Any]]:
    """Conversational preference rows (TRL's message format)."""
    def msg(role: str, content: str) -> Dict[str, str]:
        return {"role": role, "content": content}

    return [
        {"prompt": [msg("system", "You are a helpful assistant."), msg("user", "What color is the sky?")],
         "chosen": [msg("assistant", "It is blue.")],
         "rejected": [msg("assistant", "It is green.")]},
        {"prompt": [msg("user", "Say hello."), msg("assistant", "Hello!"),
                    msg("user", "Now say it in French.")],
         "chosen": [msg("assistant", "Bonjour ! Ça va très bien.")],
         "rejected": [msg("assistant", "Hello again.")]},
        {"prompt": [msg("user", "東京はどこですか？")],
         "chosen": [msg("assistant", "東京は日本の首都です。")],
         "rejected": [msg("assistant", "わかりません。")]},
        {"prompt": [msg("system", "Answer with emoji only."), msg("user", "How was the pizza? 🍕")],
         "chosen": [msg("assistant", "😋👍")],
         "rejected": [msg("assistant", "👎")]},
        {"prompt": [msg("system", "  Be brief.\n"), msg("user", "\tWhy is the river big? "),
                    msg("assistant", " Rain. "), msg("user", "And the tree?\n")],
         "chosen": [msg("assistant", " It grew for ten years.\n")],
         "rejected": [msg("assistant", "no")]},
        {"prompt": [msg("user", "Write a note about: " + _paragraph(rng, 40))],
         "chosen": [msg("assistant", _paragraph(rng, 30))],
         "rejected": [msg("assistant", _paragraph(rng, 8))]},
    ]


def make_embedding_rows(rng: random.Random) -> List[Dict[str, str]]:
    """Texts for the encoder."""
    return [
        {"text": "hello world"},
        {"text": "The quick red dog ran to the big house."},
        {"text": "Un café très naïf, déjà été — über schön."},
        {"text": "東京は日本の首都です。你好，世界！"},
        {"text": "pizza 🍕 rocket 🚀 thumbs 👍"},
        {"text": "tabs\tand\nnewlines\n\tindented"},
        {"text": "a literal <s> token and </s> inside"},
        {"text": _paragraph(rng, 560)},
    ]


# The wide-vocabulary fixture: a corpus rich enough for a 32,000-token BPE vocabulary, and
# preference rows with log-normal lengths.
ONSETS = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
          "z", "br", "ch", "st", "tr", "sh", "th", "kl", "pr", "gr", "sp", "qu"]
NUCLEI = ["a", "e", "i", "o", "u", "ai", "ou", "ee", "y", "ea", "io"]
CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "ng", "x", "ck", "nd"]


def _wide_lexicon(rng: random.Random, size: int) -> List[str]:
    """``size`` distinct pseudo-words of one to four syllables, in a seeded order."""
    seen: Dict[str, None] = {}
    while len(seen) < size:
        word = "".join(rng.choice(ONSETS) + rng.choice(NUCLEI) + rng.choice(CODAS)
                       for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
        seen.setdefault(word, None)
    return list(seen)


def _wide_sentence(rng: random.Random, lexicon: Sequence[str], n_min: int, n_max: int) -> str:
    words = []
    for _ in range(rng.randint(n_min, n_max)):
        r = rng.random()
        if r < 0.08:
            words.append(rng.choice(FOREIGN_WORDS))
        elif r < 0.3:
            words.append(rng.choice(WORDS))
        else:
            # Zipf-like: low ranks far more often than high ones
            words.append(lexicon[min(len(lexicon) - 1, int(len(lexicon) * rng.random() ** 3))])
    s = " ".join(words)
    if rng.random() < 0.6:
        s = s[:1].upper() + s[1:] + rng.choice(PUNCTUATION)
    if rng.random() < 0.1:
        s += " " + str(rng.randint(0, 99999))
    return s


def make_wide_corpus(rng: random.Random) -> Tuple[List[str], List[str]]:
    """The wide tokenizer's training corpus and the pseudo-word lexicon it is drawn from."""
    lexicon = _wide_lexicon(rng, 40000)
    corpus = [_wide_sentence(rng, lexicon, 4, 20) for _ in range(24000)]
    # every pseudo-word at least once, so the rare ones still get tokens of their own
    corpus += [" ".join(lexicon[i: i + 20]) for i in range(0, len(lexicon), 20)]
    return corpus + make_corpus(random.Random(rng.random())), lexicon


def _text_with_tokens(rng: random.Random, lexicon: Sequence[str], tokenizer: Any, n: int,
                      lead: str = "") -> str:
    """Seeded text of about ``n`` tokens (cut at a token boundary), starting with ``lead``."""
    text = lead
    while len(tokenizer(text, add_special_tokens=False)["input_ids"]) < n:
        text += ("" if not text or text[-1].isspace() else " ") + _wide_sentence(rng, lexicon, 4, 20)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    if len(enc["input_ids"]) > n:
        text = text[: enc["offset_mapping"][n - 1][1]]
    return text.rstrip()


def make_skewed_rows(rng: random.Random, lexicon: Sequence[str], tokenizer: Any) -> List[Dict[str, str]]:
    """Text preference rows whose prompt and completion lengths (in tokens) are log-normal.

    Prompt+chosen is about 120 tokens at the median and 280 at the 90th percentile; a few rows
    go past 560 and one to about 1,030 (so that max_length 1024 cuts it and 512 drops it under
    keep_start).
    """
    import math

    lengths = []
    for _ in range(WIDE_ROWS):
        prompt = max(1, round(math.exp(rng.gauss(math.log(85), 0.75))))
        chosen = max(1, round(math.exp(rng.gauss(math.log(28), 0.7))))
        rejected = max(1, round(math.exp(rng.gauss(math.log(24), 0.7))))
        lengths.append([prompt, chosen, rejected])
    tail = [[470, 110, 60], [560, 90, 150], [610, 170, 40], [880, 150, 120]]
    for k, where in enumerate(rng.sample(range(WIDE_ROWS), len(tail))):
        lengths[where] = tail[k]
    rows = []
    for prompt, chosen, rejected in lengths:
        rows.append({
            "prompt": _text_with_tokens(rng, lexicon, tokenizer, prompt,
                                        lead=rng.choice(("", "Question: ", "Notes:\n", "Q: "))),
            "chosen": " " + _text_with_tokens(rng, lexicon, tokenizer, chosen),
            "rejected": " " + _text_with_tokens(rng, lexicon, tokenizer, rejected),
        })
    return rows


# --------------------------------------------------------------------------------------------
# Tokenizer and models
# --------------------------------------------------------------------------------------------


def _byte_level_bpe(corpus: Sequence[str], vocab_size: int, specials: Sequence[str]) -> Any:
    """A byte-level BPE ``tokenizers.Tokenizer`` of ``vocab_size`` ids trained on ``corpus``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


def train_tokenizer(corpus: Sequence[str]) -> Any:
    """A byte-level BPE tokenizer wrapped as a transformers fast tokenizer."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tok = _byte_level_bpe(corpus, VOCAB_SIZE, SPECIAL_TOKENS)
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS,
                                   pad_token=PAD, model_max_length=MAX_POSITIONS)


def train_wide_tokenizer(corpus: Sequence[str]) -> Any:
    """A Qwen-like byte-level BPE tokenizer of WIDE_TOKENIZER_SIZE ids: no BOS, ChatML specials."""
    from transformers import PreTrainedTokenizerFast

    tok = _byte_level_bpe(corpus, WIDE_TOKENIZER_SIZE, WIDE_SPECIAL_TOKENS)
    if tok.get_vocab_size() < WIDE_TOKENIZER_SIZE:
        raise FixtureError(f"the wide tokenizer has only {tok.get_vocab_size()} ids, expected "
                           f"{WIDE_TOKENIZER_SIZE}: the corpus is too small")
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=WIDE_EOS, pad_token=WIDE_PAD,
                                   model_max_length=WIDE_MAX_POSITIONS)


def build_wide_model(tokenizer: Any, seed: int) -> Any:
    """A tiny seeded Qwen2 with a WIDE_VOCAB_SIZE-wide tied head."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed + 4)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=WIDE_VOCAB_SIZE, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=WIDE_MAX_POSITIONS,
        tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id))
    return _scaled(model)


def _scaled(model: Any) -> Any:
    import torch

    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.mul_(WEIGHT_SCALE)
    return model.eval()


def build_models(tokenizer: Any, seed: int) -> Dict[str, Any]:
    """Tiny seeded Llama, GPT-2 and BERT models sharing ``tokenizer``'s vocabulary."""
    import torch
    from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig,
                              LlamaForCausalLM)

    vocab = len(tokenizer)
    ids = dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
               eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed + 1)
    llama = LlamaForCausalLM(LlamaConfig(
        vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=False, **ids))
    torch.manual_seed(seed + 2)
    gpt2 = GPT2LMHeadModel(GPT2Config(
        vocab_size=vocab, n_positions=MAX_POSITIONS, n_embd=64, n_layer=2, n_head=4, **ids))
    torch.manual_seed(seed + 3)
    encoder = BertModel(BertConfig(
        vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=MAX_POSITIONS,
        pad_token_id=tokenizer.pad_token_id), add_pooling_layer=False)
    return {"llama": _scaled(llama), "gpt2": _scaled(gpt2), "encoder": _scaled(encoder)}


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _jsonl_bytes(rows: Sequence[Dict[str, Any]], compact: bool = False) -> bytes:
    separators = (",", ":") if compact else (", ", ": ")
    return "".join(json.dumps(r, ensure_ascii=False, separators=separators) + "\n"
                   for r in rows).encode("utf-8")


def _read_jsonl(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------------------------
# Oracles
# --------------------------------------------------------------------------------------------


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
    import prepare_dataset

    conversational = isinstance(rows[0]["prompt"], list)
    out, _ = prepare_dataset.tokenize_rows(rows, tokenizer, conversational, engine="trl")
    builtin, _ = prepare_dataset.tokenize_rows(rows, tokenizer, conversational, engine="builtin")
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
        _log(f"expected: {cases[-1]['name']} ({time.time() - t0:.1f} s)")

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
        _log(f"expected: {cases[-1]['name']} ({time.time() - t0:.1f} s)")
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


# --------------------------------------------------------------------------------------------
# Independent cross-check with the exported TorchScript files
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


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


README = """\
# Bring-your-own-model fixtures

Generated by `python scripts/make_test_models.py --out model-runner/src/test/resources/byo --seed {seed}`
(torch {torch}, transformers {transformers}, trl {trl}; deterministic, nothing downloaded; do not edit
by hand). `llama/`, `gpt2/` (causal LMs, {vocab}-token byte-level BPE vocabulary, hidden 64, 2 layers,
1024 positions) and `encoder/` (BERT, hidden 32, task hidden-states; all weights scaled by {scale}) are
model directories written by `scripts/export_hf_model.py`: `model.pt` (TorchScript,
`forward(input_ids, attention_mask)`, right padding), `tokenizer.json`, `tokenizer_config.json`,
`chat_template.jinja` (Llama-3 style for llama, ChatML for gpt2) and `tensorcache-model.json`.
`data/text.jsonl` and `data/conversational.jsonl` are TRL preference rows (`text.jsonl.gz` is the
same text gzip-compressed), `data/tokens.jsonl` is TRL's tokenization of `text.jsonl` for llama,
`data/conversational.<model>.jsonl` is `scripts/prepare_dataset.py` output and
`data/embedding.jsonl` holds encoder texts. `expected.json` holds reference log-probs computed by
TRL's own `DPOTrainer(precompute_ref_log_probs=True)` on the eager transformers models, per case
(model, data set, max_length, truncation_mode), with the ids TRL used and its exact rules in
`semantics`; `expected-embedding.json` holds the eager encoder's masked-mean embeddings;
`tokenizer_check.json` holds Python token ids of every fixture string with and without special
tokens. The generator recomputed every expected value from the `model.pt` files before writing.

## Split (format 2) model directories

`llama-split/`, `gpt2-split/` and `wide/` are written by `scripts/export_hf_model.py` in format 2:
`body.pt` (TorchScript `forward(input_ids, attention_mask)` returning the hidden states `[B, T, H]`
the output head takes, right padding) and `head.pt` (`forward(hidden)`, `[N, H]` to logits
`[N, V]`) instead of `model.pt`; their `tensorcache-model.json` has `format_version` 2, `files`
and the model's dimensions. `llama-split/` and `gpt2-split/` hold the weights and the tokenizer
files of `llama/` and `gpt2/`: every case of `expected.json` for those models holds for them too
(`split_dirs` maps `llama` and `gpt2` to them; data sets are unchanged).

`wide/` is a tiny Qwen2 (`Qwen2ForCausalLM`: hidden 32, 2 layers, 4 attention heads, 2 key/value
heads, intermediate 64, {wide_positions} positions, weights scaled by {scale}) with a tied {wide_vocab}-wide head
and a {wide_tokenizer}-id Qwen-like byte-level BPE tokenizer (no BOS, eos `{wide_eos}`, pad
`{wide_pad}`, ChatML template) trained on a seeded corpus of pseudo-words.
`data/skewed.jsonl` holds {rows} text preference rows whose prompt and completion lengths are
log-normal (prompt+chosen in TRL's tokens: median {p50}, 90th percentile {p90}, {over560} rows past 560,
longest {longest}). TRL's values for it (max_length 1024 keep_start, 512 keep_end, 512
keep_start) are the `split_cases` of `expected.json`, kept out of `cases` because `wide/` has no
`model.pt`. The generator recomputed every split value from `body.pt` + `head.pt` (the head only
at scored positions) and checked `head(body)` of `llama-split/` and `gpt2-split/` against
`llama/model.pt` and `gpt2/model.pt`. `python scripts/make_test_models.py --out
model-runner/src/test/resources/byo --only split,wide` rewrites only these three directories,
`data/skewed.jsonl`, the split keys of `expected.json` and this file, leaving every other file as
it is.
"""

TEMPLATES = {"llama": LLAMA3_TEMPLATE, "gpt2": CHATML_TEMPLATE, "encoder": None}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
WIDE_SEED_OFFSET = 1_000_003


def _quiet() -> None:
    import torch
    import transformers
    from datasets import disable_progress_bars

    disable_progress_bars()
    os.environ["TQDM_DISABLE"] = "1"
    # TRL warns for each row whose prompt ids are not a prefix of its prompt+completion ids; the
    # text data set has such a row on purpose ("The answer is: " + "yes").
    logging.getLogger("trl.trainer.dpo_trainer").setLevel(logging.ERROR)
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(1)  # one thread: the same float sums on every run


def _base_inputs(seed: int) -> Tuple[Dict[str, List[Dict[str, Any]]], Any, Dict[str, Any]]:
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

    loaded = export_hf_model.load_model(str(hf_dir), task, log=_log)
    loaded_tok = export_hf_model.load_tokenizer(str(hf_dir))
    export_hf_model.export(loaded, loaded_tok, target, task, source=source, max_check_length=64,
                           log=_log, split=split)
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
    _log(f"wide tokenizer: {len(tokenizer)} ids ({time.time() - t0:.1f} s)")
    rows = make_skewed_rows(rng, lexicon, tokenizer)
    model = build_wide_model(tokenizer, seed)
    hf_dir = work / f"hf-{WIDE}"
    _save_hf(model, tokenizer, CHATML_TEMPLATE, hf_dir)
    _export(hf_dir, stage / WIDE, "causal-lm", f"scripts/make_test_models.py --seed {seed} ({WIDE})",
            split=True)
    (stage / "data").mkdir(exist_ok=True)
    (stage / "data" / "skewed.jsonl").write_bytes(_jsonl_bytes(rows))
    eager = export_hf_model.load_model(str(hf_dir), "causal-lm", log=_log)
    return compute_wide_expected(eager, AutoTokenizer.from_pretrained(str(stage / WIDE)), rows,
                                 work, seed)


def _length_stats(cases: List[Dict[str, Any]]) -> Dict[str, Any]:
    import statistics

    if not cases:
        return {"p50": "?", "p90": "?", "over560": "?", "longest": "?"}
    totals = sorted(len(r["prompt_ids"]) + len(r["chosen_ids"]) for r in cases[0]["rows"])
    deciles = statistics.quantiles(totals, n=10, method="inclusive")
    return {"p50": round(statistics.median(totals)), "p90": round(deciles[8]),
            "over560": sum(t > 560 for t in totals), "longest": totals[-1]}


def _readme(seed: int, vocab: int, split_cases: List[Dict[str, Any]]) -> str:
    import torch
    import transformers
    import trl

    return README.format(
        seed=seed, torch=torch.__version__, transformers=transformers.__version__,
        trl=trl.__version__, vocab=vocab, scale=WEIGHT_SCALE, wide_positions=WIDE_MAX_POSITIONS,
        wide_vocab=WIDE_VOCAB_SIZE, wide_tokenizer=WIDE_TOKENIZER_SIZE, wide_eos=WIDE_EOS,
        wide_pad=WIDE_PAD, rows=WIDE_ROWS, **_length_stats(split_cases))


def _check_split(stage: Path, base: Path, expected: Dict[str, Any], parts: Sequence[str]) -> None:
    """Cross-check the format 2 fixtures in ``stage`` (the format 1 ones are in ``base``)."""
    if "split" in parts:
        for name, split_name in SPLIT_DIRS.items():
            diff = check_same_model(stage / split_name, base / name, TOKENIZER_FILES)
            _log(f"cross-check: {split_name} holds {name}'s tokenizer files and model "
                 f"(max |head(body) - model.pt| = {diff:.2e})")
        worst = cross_check_split({n: stage / d for n, d in SPLIT_DIRS.items()}, expected["cases"])
        _log(f"cross-check: every {', '.join(SPLIT_DIRS)} case matches body.pt + head.pt of "
             f"{', '.join(SPLIT_DIRS.values())} (worst |diff| = {worst:.3f} of the tolerance)")
    if "wide" in parts:
        worst = cross_check_split({WIDE: stage / WIDE}, expected["split_cases"])
        _log(f"cross-check: every split case matches {WIDE}/body.pt + head.pt (worst |diff| = "
             f"{worst:.3f} of the tolerance)")


def generate(out: Path, seed: int, only: Optional[Sequence[str]] = None) -> None:
    """Build the fixtures into a temporary directory, check them, then put them in place.

    Without ``only`` every fixture is built and ``out`` is replaced as a whole. With ``only``
    (names from NEW_PARTS) just those format 2 fixtures are built and moved into the existing
    ``out``, with the split keys of its expected.json and its README.md; nothing else is touched.
    """
    import export_hf_model

    parts = list(NEW_PARTS) if only is None else [p for p in NEW_PARTS if p in only]
    if only is not None:
        for name in ["expected.json", "data"] + (list(SPLIT_DIRS) if "split" in parts else []):
            if not (out / name).exists():
                raise FixtureError(f"--only needs an existing fixture directory: {out / name} is missing")
    _quiet()
    started = time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = export_hf_model.make_temp_dir(out.parent, out.name)
    work = Path(tempfile.mkdtemp(prefix="tensorcache-fixtures-"))
    try:
        if only is None:
            data, tokenizer, models = _base_inputs(seed)
            expected, embedding = _generate_logits_fixtures(stage, work, seed, data, tokenizer, models)
            base = stage
        else:
            expected = json.loads((out / "expected.json").read_text(encoding="utf-8"))
            embedding = None
            base = out
            if "split" in parts:
                data, tokenizer, models = _base_inputs(seed)
        if "split" in parts:
            export_split_dirs(stage, work, tokenizer, models, seed)
        split_cases = build_wide(stage, work, seed) if "wide" in parts else expected.get("split_cases", [])
        split_dirs = {n: d for n, d in SPLIT_DIRS.items() if (stage / d).is_dir() or (out / d).is_dir()}
        expected.update(split_expected(split_dirs, split_cases))
        _write_json(stage / "expected.json", expected)
        (stage / "README.md").write_text(_readme(seed, _old_vocab(base), split_cases), encoding="utf-8")

        if embedding is not None:
            worst = cross_check(stage, expected, embedding)
            _log(f"cross-check: every expected value matches model.pt (worst |diff| = "
                 f"{worst:.3f} of the 1e-4*max(1,|v|) tolerance)")
        _check_split(stage, base, expected, parts)
        if only is None:
            export_hf_model.move_into_place(stage, out)
        else:
            moved = [d for d in list(SPLIT_DIRS.values()) + [WIDE] if (stage / d).is_dir()]
            for d in moved:
                export_hf_model.move_into_place(stage / d, out / d)
            files = ["expected.json", "README.md"] + (["data/skewed.jsonl"] if "wide" in parts else [])
            for f in files:
                os.replace(stage / f, out / f)
            shutil.rmtree(stage, ignore_errors=True)
            _log(f"replaced {', '.join(moved + files)} in {out}")
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    _log(f"wrote {out} ({size / 1e6:.2f} MB) in {time.time() - started:.0f} s")


def _old_vocab(out: Path) -> int:
    meta = json.loads((out / "llama" / "tensorcache-model.json").read_text(encoding="utf-8"))
    return int(meta["tokenizer_vocab_size"])


def _generate_logits_fixtures(stage: Path, work: Path, seed: int, data: Dict[str, List[Dict[str, Any]]],
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
        eager[name] = export_hf_model.load_model(str(hf_dir), tasks[name], log=_log)
        tokenizers[name] = AutoTokenizer.from_pretrained(str(stage / name))
    tokenizer_bytes = {(stage / n / "tokenizer.json").read_bytes() for n in models}
    if len(tokenizer_bytes) != 1:
        raise FixtureError("the three model directories hold different tokenizer.json files")

    data_dir = stage / "data"
    data_dir.mkdir()
    text_bytes = _jsonl_bytes(data["text"])
    (data_dir / "text.jsonl").write_bytes(text_bytes)
    (data_dir / "text.jsonl.gz").write_bytes(gzip.compress(text_bytes, mtime=0))
    (data_dir / "conversational.jsonl").write_bytes(_jsonl_bytes(data["conversational"]))
    (data_dir / "embedding.jsonl").write_bytes(_jsonl_bytes(data["embedding"]))
    for name in ("llama", "gpt2"):
        prepare_dataset.prepare(stage / name, data_dir / "conversational.jsonl",
                                data_dir / f"conversational.{name}.jsonl", engine="trl", log=_log)

    expected = compute_expected(eager, tokenizers, data, work, seed)
    tokens_rows = [{k: r[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")}
                   for r in next(c for c in expected["cases"] if c["name"] == "llama-tokens")["rows"]]
    (data_dir / "tokens.jsonl").write_bytes(_jsonl_bytes(tokens_rows, compact=True))
    for name in ("llama", "gpt2"):
        prepared = _read_jsonl(data_dir / f"conversational.{name}.jsonl")[1:]
        case = next(c for c in expected["cases"] if c["name"] == f"{name}-conversational")
        if prepared != [{k: r[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")} for r in case["rows"]]:
            raise FixtureError(f"conversational.{name}.jsonl differs from TRL's tokenization")
    embedding = compute_expected_embedding(eager["encoder"], tokenizers["encoder"], data["embedding"])
    _write_json(stage / "expected-embedding.json", embedding)
    _write_json(stage / "tokenizer_check.json",
                _tokenizer_check(tokenizers["llama"], _fixture_strings(data, tokenizers)))
    return expected, embedding


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="make_test_models.py",
        description=(
            "Generate the bring-your-own-model test fixtures: a seeded BPE tokenizer, tiny Llama, "
            "GPT-2 and BERT models exported to TorchScript model directories (model.pt), the same "
            "Llama and GPT-2 in the split format (body.pt + head.pt), a tiny Qwen2 with a "
            "32,768-wide vocabulary in the split format, preference and embedding data sets, and "
            "reference values computed by TRL's DPOTrainer. OUT is replaced as a whole once every "
            "value has been cross-checked, unless --only is given."
        ),
        epilog="Exit codes: 0 written, 2 bad argument or failed cross-check, 1 unexpected failure.",
    )
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="fixture directory, e.g. model-runner/src/test/resources/byo")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="seed of every random choice. Default: %(default)s")
    parser.add_argument("--only", metavar="PARTS",
                        help=f"comma-separated subset of {','.join(NEW_PARTS)}: rebuild only those "
                             "format 2 fixtures in the existing DIR (split: "
                             f"{', '.join(SPLIT_DIRS.values())}; wide: {WIDE}/ and "
                             "data/skewed.jsonl), rewriting the split keys of expected.json and "
                             "README.md and leaving every other file as it is")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    out = Path(args.out).absolute()
    try:
        if out.exists() and not out.is_dir():
            raise FixtureError(f"--out '{out}' exists and is not a directory")
        if args.seed < 0:
            raise FixtureError(f"--seed {args.seed} is negative, expected a non-negative integer")
        only = None
        if args.only is not None:
            only = [p.strip() for p in args.only.split(",") if p.strip()]
            unknown = [p for p in only if p not in NEW_PARTS]
            if unknown or not only:
                raise FixtureError(f"--only '{args.only}': expected a comma-separated subset of "
                                   f"{','.join(NEW_PARTS)}")
        generate(out, args.seed, only)
    except FixtureError as e:
        _log(f"error: {e}")
        return 2
    except ImportError as e:
        _log(f"error: a required package is missing ({e}); the generator needs torch, "
             "transformers, tokenizers, trl and datasets")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
