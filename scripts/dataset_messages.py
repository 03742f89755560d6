"""Conversational language-modeling rows ``{"messages": [...]}`` tokenized and labeled as TRL 1.13's
``DataCollatorForChatML`` (``trl.experimental.utils``, the collator of the GKD trainer) labels them:
with TRL's own collator when it is installed, else with a built-in copy of its rules.

The rules: the whole conversation is rendered by the chat template (no generation prompt), the
prompt is every message but the last, rendered with the generation prompt; the conversation is
tokenized without special tokens (the template writes them); the completion starts at the first
token that starts at or after the end of the rendered prompt (byte offsets for a byte-level
tokenizer, else the prompt's own token count); sequences longer than ``max_length`` keep their
last ``max_length`` tokens (``max_length`` None: ``min(tokenizer.model_max_length, 1024)``); a row
left with no prompt token is refused, as TRL refuses it. ``completion_mask`` is 1 where TRL's
labels are not -100: on the completion tokens after truncation.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from dataset_source import PrepareError

TRL_SEMANTICS = "1.13"


def default_max_length(tokenizer: Any) -> int:
    """TRL's default when no max_length is given."""
    return min(tokenizer.model_max_length, 1024)


def _trl_row(collator: Any, messages: List[Dict[str, Any]]) -> Dict[str, List[int]]:
    batch = collator([{"messages": messages}])  # one row: no padding
    ids = [int(x) for x in batch["input_ids"][0]]
    mask = [0 if int(label) == collator.ignore_index else 1 for label in batch["labels"][0]]
    return {"input_ids": ids, "completion_mask": mask}


def _completion_start(tokenizer: Any, prompt: str, text: str) -> Tuple[List[int], int]:
    """The ids of ``text`` (no special tokens) and the position of its first completion token."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    byte_level = backend is not None and "ByteLevel" in str(backend.pre_tokenizer)
    if not byte_level:
        ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
        return ids, len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    encoding = backend.encode(text, add_special_tokens=False)
    prompt_bytes = len(prompt.encode("utf-8"))
    byte_at = [0]
    for ch in text:
        byte_at.append(byte_at[-1] + len(ch.encode("utf-8")))
    start = next((i for i, (s, _) in enumerate(encoding.offsets) if byte_at[s] >= prompt_bytes),
                 len(encoding.ids))
    return list(encoding.ids), start


def _builtin_row(tokenizer: Any, messages: List[Dict[str, Any]], max_length: int) -> Dict[str, List[int]]:
    prompt = tokenizer.apply_chat_template(messages[:-1], add_generation_prompt=True, tokenize=False)
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=False, tokenize=False)
    ids, start = _completion_start(tokenizer, prompt, text)
    if len(ids) > max_length:
        start = max(0, start - (len(ids) - max_length))
        ids = ids[-max_length:]
    if start == 0:
        raise ValueError(f"no prompt token left after truncation to max_length={max_length}")
    return {"input_ids": ids, "completion_mask": [0] * start + [1] * (len(ids) - start)}


def check_messages_rows(source: Any, check_messages: Any) -> List[List[Dict[str, Any]]]:
    """Every row's ``messages``, checked with ``check_messages(where, field, value)``."""
    out = []
    for number, row in source.rows:
        where = source.where(number)
        if "messages" not in row:
            raise PrepareError(f"{where}: missing field 'messages' ({source.ref(source.rows[0][0])} "
                               "has it: all rows must be conversations)")
        check_messages(where, "messages", row["messages"])
        out.append(row["messages"])
    return out


def tokenize_messages(rows: List[List[Dict[str, Any]]], tokenizer: Any, max_length: Optional[int],
                      engine: str, where: Any) -> Tuple[List[Dict[str, List[int]]], str, int]:
    """Each row's messages as ``{"input_ids", "completion_mask"}``; return them, the TRL
    semantics version and the max length used. ``where(i)`` names row ``i`` in errors."""
    try:
        import trl
        from trl.experimental.utils import DataCollatorForChatML
    except ImportError:
        trl = None
    if engine == "trl" and trl is None:
        raise PrepareError("--engine trl: trl.experimental.utils.DataCollatorForChatML is not importable")
    length = default_max_length(tokenizer) if max_length is None else max_length
    use_trl = engine in ("trl", "auto") and trl is not None
    collator = None
    if use_trl:
        if tokenizer.pad_token_id is None:  # only a batch of one is made: padding never happens
            tokenizer.pad_token = tokenizer.eos_token
        collator = DataCollatorForChatML(tokenizer=tokenizer, max_length=length)
    out = []
    for i, messages in enumerate(rows):
        if len(messages) < 2:
            raise PrepareError(f"{where(i)}: field 'messages' has {len(messages)} message, expected "
                               "at least 2 (a prompt and the completion, the last message)")
        try:
            row = _trl_row(collator, messages) if use_trl else _builtin_row(tokenizer, messages, length)
        except ValueError as e:
            raise PrepareError(f"{where(i)}: {e}") from e
        if sum(row["completion_mask"][1:]) == 0:
            raise PrepareError(f"{where(i)}: no completion token left after truncation to "
                               f"max_length={length}")
        out.append(row)
    semantics = ".".join(str(trl.__version__).split(".")[:2]) if use_trl else TRL_SEMANTICS
    return out, semantics, length
