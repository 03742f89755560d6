"""The seeded text: a corpus for the tokenizer, preference rows (text and conversational),
encoder texts, and the wide fixture's pseudo-word corpus and length-skewed rows."""

from __future__ import annotations

import random
from typing import Any, Dict, List, Sequence, Tuple

from byo_fixtures import EOS, WIDE_ROWS

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
