"""The pieces of ``make_test_models.py``: the seeded text and preference rows (``text``), the
tokenizers and tiny models (``models``), TRL's reference values (``oracles``), their independent
cross-checks against the exported files (``checks``) and the fixture directories built from them
(``build``). Here: the fixtures' sizes, names and chat templates, and the error that fails a run."""

from __future__ import annotations

import sys

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


class FixtureError(Exception):
    """Bad arguments, or fixtures that fail their own cross-checks; exit code 2."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
