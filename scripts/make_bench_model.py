#!/usr/bin/env python3
"""Make the seeded model and data set of the bring-your-own-model benchmark (``bench --only byo``).

Everything is built locally and deterministically from ``--seed`` (nothing is downloaded):

* a byte-level BPE tokenizer of about 8k ids trained on a seeded synthetic corpus (pseudo-words
  drawn with Zipf frequencies, English function words, numbers, punctuation); its
  post-processor prepends ``<s>`` when special tokens are added, as Llama's does;
* a Llama with random weights: hidden 256, 4 layers, 8 attention heads (4 key/value heads),
  intermediate 704, 1024 positions, eager attention; exported with
  ``export_hf_model.export`` (task ``causal-lm``) to ``OUT/model``, and saved as a Hugging Face
  model (``save_pretrained``) to ``OUT/hf`` for the Python reference;
* ``OUT/prefs.jsonl``: ``--rows`` text preference rows ``{"prompt", "chosen", "rejected"}``
  whose prompt + completion + EOS is 128 to 256 tokens for both completions;
* ``OUT/bench-model.json``: what was made (written last: a directory without it is unfinished).

Everything is written to a temporary directory beside ``OUT`` and renamed into place at the end.

Example::

    python scripts/make_bench_model.py --out bench/work/byo/bench-model-s20261123 --rows 512
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_SEED = 20261123
DEFAULT_ROWS = 512
VOCAB_SIZE = 8192
HIDDEN, LAYERS, HEADS, KV_HEADS, INTERMEDIATE = 256, 4, 8, 4, 704
MAX_POSITIONS = 1024
# the attention export_hf_model traces by default (and TRL runs by default)
ATTENTION = "sdpa"
MIN_TOKENS, MAX_TOKENS = 128, 256
PAD, BOS, EOS = "<pad>", "<s>", "</s>"
FUNCTION_WORDS = (
    "the a an of and to in is it that for on with as was at by be this are from or not but "
    "which you we they he she his her their what when where why how yes no one two three"
).split()
PUNCTUATION = [".", ",", "?", "!", ":", ";"]
ONSETS = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
          "z", "br", "ch", "cl", "dr", "fr", "gr", "kr", "pl", "pr", "sh", "sl", "st", "th", "tr"]
NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ie", "oo", "ou"]
CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ck"]


class BenchModelError(Exception):
    """Bad arguments or a result that fails its own checks; exit code 2."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def make_lexicon(rng: random.Random, size: int = 30000) -> List[str]:
    """Seeded pseudo-words of one to four syllables, most frequent first."""
    words: Dict[str, None] = {}
    while len(words) < size:
        n = rng.choice((1, 2, 2, 2, 3, 3, 4))
        words["".join(rng.choice(ONSETS) + rng.choice(NUCLEI) + rng.choice(CODAS)
                      for _ in range(n))] = None
    return list(words)


class TextSource:
    """Seeded sentences: Zipf-distributed pseudo-words mixed with function words and numbers."""

    def __init__(self, rng: random.Random, lexicon: Sequence[str]) -> None:
        self.rng = rng
        self.lexicon = lexicon
        weights = [1.0 / (rank + 10) for rank in range(len(lexicon))]
        total = sum(weights)
        self.cumulative = []
        acc = 0.0
        for w in weights:
            acc += w / total
            self.cumulative.append(acc)

    def word(self) -> str:
        r = self.rng.random()
        if r < 0.35:
            return self.rng.choice(FUNCTION_WORDS)
        if r < 0.38:
            return str(self.rng.randint(0, 9999))
        import bisect

        i = bisect.bisect_left(self.cumulative, self.rng.random())
        return self.lexicon[min(i, len(self.lexicon) - 1)]

    def sentence(self, n_min: int = 4, n_max: int = 18) -> str:
        words = [self.word() for _ in range(self.rng.randint(n_min, n_max))]
        return words[0].capitalize() + " " + " ".join(words[1:]) + self.rng.choice(PUNCTUATION)


def train_tokenizer(corpus: Sequence[str]) -> Any:
    """A byte-level BPE tokenizer (``<s>`` prepended by its post-processor) as a fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=[PAD, BOS, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS,
                                   pad_token=PAD, model_max_length=MAX_POSITIONS)


def build_model(tokenizer: Any, seed: int) -> Any:
    """The seeded Llama over ``tokenizer``'s ids, sdpa attention (as export_hf_model loads one)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=HIDDEN, intermediate_size=INTERMEDIATE,
        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
        max_position_embeddings=MAX_POSITIONS, tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id)
    config._attn_implementation = ATTENTION
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


def _grow(source: TextSource, encode: Any, head: str, target: int, limit: int) -> str:
    """Words appended to ``head`` until ``encode(head + text)`` has at least ``target`` ids.

    The count is estimated word by word and taken exactly only near the target (BPE merges across
    words are rare here: each word starts with a space).
    """
    text = ""
    exact = len(encode(head))
    estimate = exact
    for _ in range(100 * limit):
        word = source.word()
        if source.rng.random() < 0.08:
            word += source.rng.choice(PUNCTUATION)
        candidate = text + " " + word
        guess = estimate + len(encode(" " + word)) - 1  # less the BOS of the word's own ids
        if guess < target - 8:
            text, estimate = candidate, guess
            continue
        n = len(encode(head + candidate))
        if n > limit:
            continue  # a shorter word may still fit
        text, estimate = candidate, n
        if n >= target:
            return text
    raise BenchModelError(f"could not grow a text to {target} tokens within {limit}")


def make_rows(tokenizer: Any, rng: random.Random, source: TextSource, rows: int) -> List[Dict[str, str]]:
    """Text preference rows whose prompt + completion + EOS is 128 to 256 tokens."""
    backend = tokenizer.backend_tokenizer

    def encode(text: str) -> List[int]:
        return backend.encode(text).ids

    out = []
    for i in range(rows):
        prompt = "Question " + str(i) + ":" + _grow(source, encode, "", rng.randint(32, 96), 100)
        prompt += "\nAnswer:"
        completions = []
        for _ in range(2):
            target = rng.randint(MIN_TOKENS, MAX_TOKENS - 8)
            completions.append(_grow(source, encode, prompt, target - 1, MAX_TOKENS - 1))
        out.append({"prompt": prompt, "chosen": completions[0], "rejected": completions[1]})
    return out


def token_lengths(tokenizer: Any, rows: Sequence[Dict[str, str]]) -> List[int]:
    """Lengths of prompt + completion + EOS as TRL tokenizes them, both completions of each row."""
    eos = tokenizer.eos_token
    return [len(tokenizer(r["prompt"] + r[k] + eos)["input_ids"])
            for r in rows for k in ("chosen", "rejected")]


def make(out: Path, rows: int, seed: int) -> Path:
    """Make the tokenizer, model, exported directory and data set; return ``out``."""
    import torch
    import transformers

    import export_hf_model

    if rows < 1:
        raise BenchModelError(f"--rows {rows} invalid, expected >= 1")
    out = out.absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BenchModelError(f"--out '{out}' exists and is not an empty directory")
    t0 = time.time()
    rng = random.Random(seed)
    source = TextSource(rng, make_lexicon(rng))
    tokenizer = train_tokenizer([source.sentence() for _ in range(40000)])
    _log(f"tokenizer: {len(tokenizer)} ids ({time.time() - t0:.1f} s)")
    model = build_model(tokenizer, seed)
    params = sum(p.numel() for p in model.parameters())
    data = make_rows(tokenizer, rng, source, rows)
    lengths = token_lengths(tokenizer, data)
    if min(lengths) < MIN_TOKENS or max(lengths) > MAX_TOKENS:
        raise BenchModelError(f"rows of {min(lengths)} to {max(lengths)} tokens, expected "
                              f"{MIN_TOKENS} to {MAX_TOKENS}")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        export_hf_model.export(model, tokenizer, tmp / "model", "causal-lm",
                               f"make_bench_model.py seed {seed}", log=_log)
        model.save_pretrained(str(tmp / "hf"))
        tokenizer.save_pretrained(str(tmp / "hf"))
        with open(tmp / "prefs.jsonl", "w", encoding="utf-8") as f:
            for r in data:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        info = {
            "seed": seed, "rows": rows, "architecture": "LlamaForCausalLM",
            "parameters": params, "vocab_size": len(tokenizer), "hidden_size": HIDDEN,
            "layers": LAYERS, "attention_heads": HEADS, "key_value_heads": KV_HEADS,
            "intermediate_size": INTERMEDIATE, "max_positions": MAX_POSITIONS,
            "attn_implementation": ATTENTION,
            "sequence_tokens": {"min": min(lengths), "max": max(lengths),
                                "mean": round(sum(lengths) / len(lengths), 1)},
            "torch_version": torch.__version__, "transformers_version": transformers.__version__,
            "files": {"model_dir": "model", "hf_dir": "hf", "dataset": "prefs.jsonl"},
        }
        (tmp / "bench-model.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        if out.is_dir():
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _log(f"wrote {out}: Llama of {params / 1e6:.1f} M parameters, {rows} rows of "
         f"{min(lengths)} to {max(lengths)} tokens ({time.time() - t0:.1f} s)")
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="make_bench_model.py",
        description="Make the seeded Llama (hidden 256, 4 layers, ~8k BPE vocabulary) and text "
                    "preference data set of the byo benchmark: OUT/model (exported with "
                    "export_hf_model), OUT/hf (Hugging Face), OUT/prefs.jsonl, "
                    "OUT/bench-model.json.",
        epilog="Exit codes: 0 made, 2 bad argument or failed check, 1 unexpected failure.")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory to create (must not exist or be empty)")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, metavar="N",
                        help="preference rows in prefs.jsonl. Default: %(default)s")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="seed of the corpus, tokenizer, weights and rows. Default: %(default)s")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        make(Path(args.out), args.rows, args.seed)
    except BenchModelError as e:
        _log(f"error: {e}")
        return 2
    except Exception as e:  # noqa: BLE001 - the exporter's own errors are the user's to fix too
        if type(e).__name__ == "ExportError":
            _log(f"error: {e}")
            return 2
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
