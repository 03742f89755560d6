#!/usr/bin/env python3
"""Make the seeded models and data sets of the bring-your-own-model benchmark (``bench --only byo``).

Everything is built locally and deterministically from ``--seed`` (nothing is downloaded):

* a byte-level BPE tokenizer of about 8k ids trained on a seeded synthetic corpus (pseudo-words
  drawn with Zipf frequencies, English function words, numbers, punctuation) with Qwen2's
  normalizer and pre-tokenizer, as a ``Qwen2Tokenizer`` (the class transformers loads for a Qwen2
  model whatever its ``tokenizer_config.json`` says, so it must be one for TRL and the exported
  ``tokenizer.json`` to agree): no BOS, EOS ``<|endoftext|>``, pad ``<|pad|>``;
* two Qwen2 models (``Qwen2ForCausalLM``) with random weights and the same body: hidden 256,
  4 layers, 8 attention heads (4 key/value heads), intermediate 704, 4,096 positions, untied
  input and output embeddings, sdpa attention:

  - ``small``: a vocabulary of the tokenizer's ids;
  - ``wide``: a vocabulary of 151,936 ids (Qwen2's), of which the tokenizer uses the first ~8k,
    as a real Qwen model's vocabulary exceeds its tokenizer's;

  each saved as a Hugging Face model (``save_pretrained``, what TRL loads) to ``OUT/NAME/hf`` and
  exported with ``export_hf_model.export`` (task ``causal-lm``) twice: split into a body and an
  output head (format 2) to ``OUT/NAME/model``, and logits-only (format 1) to
  ``OUT/NAME/model-logits``;
* ``OUT/prefs.jsonl``: ``--rows`` text preference rows ``{"prompt", "chosen", "rejected"}`` with
  skewed lengths: prompt and completion lengths are drawn log-normal (prompt median 38 tokens,
  completion median 64, chosen and rejected independently), so prompt + completion + EOS has a
  median of about 120 tokens, a 90th percentile of about 280 and a tail past 560, at most 1,000;
* ``OUT/long.jsonl`` (``--long-rows K``): K rows whose prompt + completion + EOS is 1,500 to
  2,048 tokens, for a memory check;
* ``OUT/bench-model.json``: what was made, with the token-length percentiles measured with the
  tokenizer as TRL tokenizes the rows (written last: a directory without it is unfinished).

Everything is written to a temporary directory beside ``OUT`` and renamed into place at the end.

Example::

    python scripts/make_bench_model.py --out bench/work/byo/bench-model-s20261123 --rows 512 \\
        --long-rows 8
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_rows import (COMPLETION_MEDIAN, COMPLETION_MIN, COMPLETION_SIGMA,  # noqa: E402
                        LONG_PROMPT, LONG_SEQUENCE, MAX_SEQUENCE, PROMPT_MEDIAN, PROMPT_MIN,
                        PROMPT_SIGMA, BenchModelError, TextSource, draw_lengths,
                        draw_long_lengths, make_lexicon, make_rows, measure, percentiles)

DEFAULT_SEED = 20261123
DEFAULT_ROWS = 512
TOKENIZER_VOCAB = 8192
ARCHITECTURE = "Qwen2ForCausalLM"
# hidden size, layers, attention heads, key/value heads, intermediate size
BODY = (256, 4, 8, 4, 704)
WIDE_VOCAB = 151936
MODELS = ("small", "wide")
MAX_POSITIONS = 4096
# the attention export_hf_model traces by default (and TRL runs by default)
ATTENTION = "sdpa"
EOS, PAD = "<|endoftext|>", "<|pad|>"
DATASET_FILE, LONG_DATASET_FILE, INFO_FILE = "prefs.jsonl", "long.jsonl", "bench-model.json"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def train_tokenizer(corpus: Sequence[str], vocab_size: int) -> Any:
    """A byte-level BPE ``Qwen2Tokenizer`` of ``vocab_size`` ids trained on ``corpus``.

    Trained with the normalizer and pre-tokenizer ``Qwen2Tokenizer`` builds, so that the merges
    learned are the ones it applies.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS, PAD],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
              for m in json.loads(tok.to_str())["model"]["merges"]]
    return Qwen2Tokenizer(vocab=tok.get_vocab(), merges=merges, eos_token=EOS, pad_token=PAD,
                          model_max_length=MAX_POSITIONS)


def check_saved_tokenizer(tokenizer: Any, hf_dir: Path, texts: Sequence[str]) -> None:
    """The tokenizer TRL loads from ``hf_dir`` (``AutoTokenizer``) and its ``tokenizer.json`` (what
    an exported directory holds) must encode ``texts`` as ``tokenizer`` does."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(str(hf_dir))
    raw = Tokenizer.from_file(str(hf_dir / "tokenizer.json"))
    for text in texts:
        ids = tokenizer(text)["input_ids"]
        if loaded(text)["input_ids"] != ids or raw.encode(text).ids != ids:
            raise BenchModelError(f"the tokenizer saved to {hf_dir} ({type(loaded).__name__} when "
                                  f"loaded) encodes differently from the one made: {text[:60]!r}")


def build_model(tokenizer: Any, vocab_size: int, body: Sequence[int], seed: int) -> Any:
    """The seeded Qwen2 of ``vocab_size`` ids over ``tokenizer``, sdpa attention (as
    export_hf_model loads one)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    hidden, layers, heads, kv_heads, intermediate = body
    config = Qwen2Config(
        vocab_size=vocab_size, hidden_size=hidden, intermediate_size=intermediate,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
        max_position_embeddings=MAX_POSITIONS, tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id)
    config.architectures = [ARCHITECTURE]
    config._attn_implementation = ATTENTION
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(config).eval()


def _write_jsonl(path: Path, rows: Sequence[Dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def _exporter() -> Tuple[Callable[..., Any], bool]:
    """``export_hf_model.export`` and whether it takes ``split`` (the body + head format)."""
    import export_hf_model

    return export_hf_model.export, "split" in inspect.signature(export_hf_model.export).parameters


def export_model(model: Any, tokenizer: Any, root: Path, name: str, seed: int) -> Dict[str, Any]:
    """Export ``model`` to ``root/name/model`` (split) and ``root/name/model-logits``; what each
    directory became, by its path relative to ``root``."""
    export, has_split = _exporter()
    variants: List[Tuple[str, Optional[bool]]] = [("model", True), ("model-logits", False)]
    if not has_split:
        _log("warning: export_hf_model.export takes no 'split' argument: only the logits-only "
             f"export is written ({name}/model-logits)")
        variants = [("model-logits", None)]
    out: Dict[str, Any] = {"model_dir": None, "model_logits_dir": None}
    for sub, split in variants:
        kwargs = {} if split is None else {"split": split}
        target = root / name / sub
        export(model, tokenizer, target, "causal-lm", f"make_bench_model.py {name} seed {seed}",
               log=_log, **kwargs)
        meta = json.loads((target / "tensorcache-model.json").read_text(encoding="utf-8"))
        out["model_dir" if sub == "model" else "model_logits_dir"] = f"{name}/{sub}"
        out["model" if sub == "model" else "model_logits"] = {
            "format_version": meta.get("format_version"),
            "files": sorted(p.name for p in target.iterdir() if p.suffix == ".pt"),
        }
    return out


def _parameters(model: Any) -> Dict[str, int]:
    embed = model.get_input_embeddings().weight.numel()
    head = model.get_output_embeddings().weight.numel()
    total = sum(p.numel() for p in model.parameters())
    return {"parameters": total, "embedding_parameters": embed, "head_parameters": head,
            "body_parameters": total - embed - head}


def make(out: Path, rows: int, seed: int, long_rows: int = 0, models: Sequence[str] = MODELS,
         body: Sequence[int] = BODY, tokenizer_vocab: int = TOKENIZER_VOCAB) -> Path:
    """Make the tokenizer, models, exported directories and data sets; return ``out``."""
    import torch
    import transformers

    if rows < 1:
        raise BenchModelError(f"--rows {rows} invalid, expected >= 1")
    if long_rows < 0:
        raise BenchModelError(f"--long-rows {long_rows} invalid, expected >= 0")
    if not models or any(m not in MODELS for m in models) or len(set(models)) != len(models):
        raise BenchModelError(f"--models {','.join(models)} invalid, expected a subset of "
                              f"{','.join(MODELS)}")
    hidden, layers, heads, kv_heads, intermediate = body
    if min(body) < 1 or hidden % heads or heads % kv_heads or (hidden // heads) % 2:
        raise BenchModelError(f"--body {','.join(map(str, body))} invalid: expected positive "
                              "sizes, hidden a multiple of heads with an even head size, heads a "
                              "multiple of key/value heads")
    if tokenizer_vocab < 300:
        raise BenchModelError(f"--tokenizer-vocab {tokenizer_vocab} invalid, expected >= 300 "
                              "(256 bytes and the special tokens)")
    out = out.absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BenchModelError(f"--out '{out}' exists and is not an empty directory")
    transformers.utils.logging.disable_progress_bar()
    t0 = time.time()
    rng = random.Random(seed)
    lexicon = make_lexicon(rng)
    source = TextSource(rng, lexicon)
    tokenizer = train_tokenizer([source.sentence() for _ in range(40000)], tokenizer_vocab)
    _log(f"tokenizer: {len(tokenizer)} ids ({time.time() - t0:.1f} s)")
    data = make_rows(tokenizer, source, rows, draw_lengths)
    lengths = measure(tokenizer, data)
    if max(lengths["sequence"]) > MAX_SEQUENCE:
        raise BenchModelError(f"a sequence of {max(lengths['sequence'])} tokens, expected at most "
                              f"{MAX_SEQUENCE}")
    long_data: List[Dict[str, str]] = []
    long_lengths: Optional[Dict[str, List[int]]] = None
    if long_rows:
        # a source of its own, so that prefs.jsonl does not depend on --long-rows
        long_rng = random.Random(seed + 1)
        long_data = make_rows(tokenizer, TextSource(long_rng, lexicon), long_rows, draw_long_lengths)
        long_lengths = measure(tokenizer, long_data)
        low, high = LONG_SEQUENCE
        if min(long_lengths["sequence"]) < low or max(long_lengths["sequence"]) > high:
            raise BenchModelError(f"long rows of {min(long_lengths['sequence'])} to "
                                  f"{max(long_lengths['sequence'])} tokens, expected {low} to {high}")
    _log(f"rows: {rows} + {long_rows} long ({time.time() - t0:.1f} s)")

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        made: Dict[str, Any] = {}
        eos = tokenizer.eos_token
        texts = [r["prompt"] + (r[k] + eos if k else "")
                 for r in data + long_data for k in ("", "chosen", "rejected")]
        for name in models:
            vocab = len(tokenizer) if name == "small" else WIDE_VOCAB
            model = build_model(tokenizer, vocab, body, seed)
            counts = _parameters(model)
            model.save_pretrained(str(tmp / name / "hf"))
            tokenizer.save_pretrained(str(tmp / name / "hf"))
            check_saved_tokenizer(tokenizer, tmp / name / "hf", texts)
            files = {"hf_dir": f"{name}/hf"}
            files.update(export_model(model, tokenizer, tmp, name, seed))
            made[name] = {"architecture": ARCHITECTURE, "vocab_size": vocab, **counts, **files}
            _log(f"{name}: {ARCHITECTURE} of {counts['parameters'] / 1e6:.1f} M parameters, "
                 f"vocabulary {vocab} ({time.time() - t0:.1f} s)")
            del model
        _write_jsonl(tmp / DATASET_FILE, data)
        if long_rows:
            _write_jsonl(tmp / LONG_DATASET_FILE, long_data)
        first = made[models[0]]
        info = {
            "seed": seed, "rows": rows, "long_rows": long_rows, "architecture": ARCHITECTURE,
            "hidden_size": hidden, "layers": layers, "attention_heads": heads,
            "key_value_heads": kv_heads, "intermediate_size": intermediate,
            "max_positions": MAX_POSITIONS, "attn_implementation": ATTENTION,
            "tie_word_embeddings": False, "dtype": "float32",
            "tokenizer_vocab_size": len(tokenizer),
            "tokenizer_class": type(tokenizer).__name__,
            "eos_token": EOS, "eos_token_id": tokenizer.eos_token_id,
            "pad_token": PAD, "pad_token_id": tokenizer.pad_token_id, "bos_token_id": None,
            "models": made,
            # the first model's, as earlier versions of this file described their one model
            "vocab_size": first["vocab_size"], "parameters": first["parameters"],
            "sequence_tokens": percentiles(lengths["sequence"]),
            "prompt_tokens": percentiles(lengths["prompt"]),
            "completion_tokens": percentiles(lengths["completion"]),
            "long_sequence_tokens": percentiles(long_lengths["sequence"]) if long_lengths else None,
            "length_model": {
                "prompt": {"median": PROMPT_MEDIAN, "sigma": PROMPT_SIGMA, "min": PROMPT_MIN},
                "completion": {"median": COMPLETION_MEDIAN, "sigma": COMPLETION_SIGMA,
                               "min": COMPLETION_MIN},
                "max_sequence": MAX_SEQUENCE,
                "long_prompt": list(LONG_PROMPT), "long_sequence": list(LONG_SEQUENCE),
            },
            "torch_version": torch.__version__, "transformers_version": transformers.__version__,
            "files": {"dataset": DATASET_FILE,
                      "long_dataset": LONG_DATASET_FILE if long_rows else None,
                      "model_dir": first["model_dir"] or first["model_logits_dir"],
                      "hf_dir": first["hf_dir"]},
        }
        (tmp / INFO_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        if out.is_dir():
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    seq = info["sequence_tokens"]
    _log(f"wrote {out}: {', '.join(models)}; {rows} rows of {seq['min']} to {seq['max']} tokens "
         f"(p50 {seq['p50']}, p90 {seq['p90']}) ({time.time() - t0:.1f} s)")
    return out


def _body(text: str) -> Tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 5:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not HIDDEN,LAYERS,HEADS,KV_HEADS,INTERMEDIATE (five integers)")
    return values


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="make_bench_model.py",
        description="Make the seeded Qwen2 models (hidden 256, 4 layers; 'small' with the ~8k "
                    "tokenizer vocabulary, 'wide' with 151,936 ids) and text preference data sets "
                    "of the byo benchmark: OUT/NAME/hf (Hugging Face), OUT/NAME/model (split "
                    "export), OUT/NAME/model-logits (logits-only export), OUT/prefs.jsonl, "
                    "OUT/long.jsonl (--long-rows), OUT/bench-model.json.",
        epilog="Exit codes: 0 made, 2 bad argument or failed check, 1 unexpected failure.")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory to create (must not exist or be empty)")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, metavar="N",
                        help="preference rows in prefs.jsonl. Default: %(default)s")
    parser.add_argument("--long-rows", type=int, default=0, metavar="K",
                        help="rows of 1,500 to 2,048 tokens in long.jsonl (none when 0). "
                             "Default: %(default)s")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="seed of the corpus, tokenizer, weights and rows. Default: %(default)s")
    parser.add_argument("--models", default=",".join(MODELS), metavar="NAMES",
                        help="which models to make, comma-separated. Default: %(default)s")
    parser.add_argument("--body", type=_body, default=BODY, metavar="H,L,NH,KV,I",
                        help="hidden size, layers, attention heads, key/value heads, intermediate "
                             "size (smaller ones make quick test models). Default: "
                             + ",".join(map(str, BODY)))
    parser.add_argument("--tokenizer-vocab", type=int, default=TOKENIZER_VOCAB, metavar="N",
                        help="ids of the trained tokenizer. Default: %(default)s")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        make(Path(args.out), args.rows, args.seed, long_rows=args.long_rows,
             models=[m.strip() for m in args.models.split(",") if m.strip()], body=args.body,
             tokenizer_vocab=args.tokenizer_vocab)
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
