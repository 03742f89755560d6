"""The benchmark's text preference rows: seeded pseudo-word sentences grown to token lengths
drawn log-normal (as TRL tokenizes a row), their measured lengths and percentiles."""

from __future__ import annotations

import bisect
import math
import random
from typing import Any, Callable, Dict, List, Sequence, Tuple

# Token lengths as TRL tokenizes a row (a completion counts its EOS).
PROMPT_MEDIAN, PROMPT_SIGMA, PROMPT_MIN = 38, 0.9, 12
COMPLETION_MEDIAN, COMPLETION_SIGMA, COMPLETION_MIN = 64, 0.86, 3
MAX_SEQUENCE = 1000
LONG_PROMPT = (64, 512)
LONG_SEQUENCE = (1500, 2048)
# how far past its target length a grown text may end
SLACK = 4
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
        i = bisect.bisect_left(self.cumulative, self.rng.random())
        return self.lexicon[min(i, len(self.lexicon) - 1)]

    def sentence(self, n_min: int = 4, n_max: int = 18) -> str:
        words = [self.word() for _ in range(self.rng.randint(n_min, n_max))]
        return words[0].capitalize() + " " + " ".join(words[1:]) + self.rng.choice(PUNCTUATION)


def _grow(source: TextSource, encode: Callable[[str], List[int]], head: str, target: int,
          limit: int) -> str:
    """Words appended to ``head`` until ``encode(head + text)`` has at least ``target`` ids.

    The count is estimated word by word and taken exactly only near the target (BPE merges across
    words are rare here: each word starts with a space).
    """
    text = ""
    estimate = len(encode(head))
    base = len(encode(""))  # special tokens added to any text
    for _ in range(100 * limit):
        word = source.word()
        if source.rng.random() < 0.08:
            word += source.rng.choice(PUNCTUATION)
        candidate = text + " " + word
        guess = estimate + len(encode(" " + word)) - base
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


def _lognormal(rng: random.Random, median: float, sigma: float, minimum: int) -> int:
    return max(minimum, int(round(rng.lognormvariate(math.log(median), sigma))))


def draw_lengths(rng: random.Random) -> Tuple[int, int, int]:
    """Target token counts (prompt, chosen and rejected with EOS) of a benchmark row:
    log-normal and independent, redrawn while a sequence could exceed ``MAX_SEQUENCE``."""
    while True:
        prompt = _lognormal(rng, PROMPT_MEDIAN, PROMPT_SIGMA, PROMPT_MIN)
        chosen = _lognormal(rng, COMPLETION_MEDIAN, COMPLETION_SIGMA, COMPLETION_MIN)
        rejected = _lognormal(rng, COMPLETION_MEDIAN, COMPLETION_SIGMA, COMPLETION_MIN)
        if prompt + max(chosen, rejected) <= MAX_SEQUENCE - SLACK:
            return prompt, chosen, rejected


def draw_long_lengths(rng: random.Random) -> Tuple[int, int, int]:
    """Target token counts of a long row: each sequence of 1,500 to 2,048 tokens."""
    prompt = rng.randint(*LONG_PROMPT)
    low, high = LONG_SEQUENCE
    return (prompt, rng.randint(low, high - SLACK) - prompt, rng.randint(low, high - SLACK) - prompt)


def make_rows(tokenizer: Any, source: TextSource, rows: int,
              draw: Callable[[random.Random], Tuple[int, int, int]]) -> List[Dict[str, str]]:
    """Text preference rows whose token counts are those ``draw`` gives (up to ``SLACK`` more)."""
    backend = tokenizer.backend_tokenizer

    def encode(text: str) -> List[int]:
        return backend.encode(text).ids

    tail = "\nAnswer:"
    tail_tokens = len(encode(tail)) - len(encode(""))
    out = []
    for i in range(rows):
        prompt_len, chosen_len, rejected_len = draw(source.rng)
        head = "Question " + str(i) + ":"
        body_target = max(len(encode(head)) + 1, prompt_len - tail_tokens)
        prompt = head + _grow(source, encode, head, body_target, body_target + SLACK) + tail
        n_prompt = len(encode(prompt))
        completions = []
        for length in (chosen_len, rejected_len):
            target = n_prompt + max(length, 2) - 1  # the EOS TRL appends is the last token
            completions.append(_grow(source, encode, prompt, target, target + SLACK))
        out.append({"prompt": prompt, "chosen": completions[0], "rejected": completions[1]})
    return out


def measure(tokenizer: Any, rows: Sequence[Dict[str, str]]) -> Dict[str, List[int]]:
    """Token counts as TRL tokenizes text rows (EOS appended to each completion; the completion
    is what follows the prompt's ids): ``prompt`` per row, ``completion`` and ``sequence`` per
    completion (chosen then rejected of each row). Raises when a prompt's ids are not a prefix of
    its prompt + completion's ids (TRL would warn and cut them apart wrongly)."""
    eos = tokenizer.eos_token
    prompts = tokenizer([r["prompt"] for r in rows])["input_ids"]
    texts = [r["prompt"] + r[k] + eos for r in rows for k in ("chosen", "rejected")]
    full = tokenizer(texts)["input_ids"]
    out: Dict[str, List[int]] = {"prompt": [], "completion": [], "sequence": []}
    for i, p in enumerate(prompts):
        out["prompt"].append(len(p))
        for j in (2 * i, 2 * i + 1):
            if full[j][:len(p)] != p:
                raise BenchModelError(f"row {i}: the prompt's ids are not a prefix of the prompt + "
                                      "completion's ids")
            out["completion"].append(len(full[j]) - len(p))
            out["sequence"].append(len(full[j]))
    return out


def percentiles(values: Sequence[int]) -> Dict[str, Any]:
    """Count, min, nearest-rank p50/p90/p99, max and mean of ``values``."""
    xs = sorted(values)

    def rank(q: float) -> int:
        return xs[max(0, math.ceil(q * len(xs)) - 1)]

    return {"count": len(xs), "min": xs[0], "p50": rank(0.5), "p90": rank(0.9), "p99": rank(0.99),
            "max": xs[-1], "mean": round(sum(xs) / len(xs), 1)}
