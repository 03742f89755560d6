"""TRL's ``DPOTrainer`` with its reference log-probs taken from TensorCache.

>>> from tensorcache.trl import DPOTrainer
>>> trainer = DPOTrainer(model, args=DPOConfig(precompute_ref_log_probs=True, ...),
...                      train_dataset=ds, processing_class=tok,
...                      tensorcache="10.0.0.5:7400/dpo-ref-...")   # or "data/<cache>/export.safetensors"
>>> trainer.train()

No reference model is loaded or run and nothing is computed again: the values of every row are
read from the cache (a cluster's lookup ports, or an export file) and attached to the raw rows by
example index, the row number of the data set the cache was filled from, before TRL extracts,
tokenizes or drops anything; a row TRL drops takes its values with it.

Before that, the inputs the cache records are checked against what the trainer is given (a stale
or foreign cache is an error, never a silent wrong number): the rows (their digest and count), the
truncation (``DPOConfig.max_length``, ``truncation_mode``), the model's weights and the tokenizer
(digests, see :mod:`tensorcache.digests`), the EOS token of text rows and the chat template of
conversational ones. After TRL has tokenized the rows, each row's completion token counts are
compared with those the cache computed over. ``with_tensorcache(MyTrainer)`` gives the same to a
``DPOTrainer`` subclass of your own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np
from trl import DPOTrainer as _TrlDPOTrainer

from .digests import chat_template_digest, rows_digest, state_digest, tokenizer_digest
from .errors import TensorCacheError
from .export import load_export

REF_COLUMNS = ("ref_chosen_logps", "ref_rejected_logps")
TOKEN_COLUMNS = ("tensorcache_chosen_tokens", "tensorcache_rejected_tokens")
_FIELDS = ("chosen_logp", "rejected_logp", "chosen_tokens", "rejected_tokens")
_LOOKUP_BATCH = 8192

Source = Union[str, "os.PathLike[str]"]


class CacheMismatch(TensorCacheError, ValueError):
    """The cache was not filled from what the trainer is given; the message names every input that
    differs, both values, and how to fill the right cache."""


@dataclass(frozen=True)
class CachedReference:
    """Every row's reference values as a cache holds them, and the inputs it records."""

    where: str
    inputs: Dict[str, str]
    chosen_logp: np.ndarray
    rejected_logp: np.ndarray
    chosen_tokens: np.ndarray
    rejected_tokens: np.ndarray


def read_reference(tensorcache: Source, token: Optional[str] = None, tls: Any = None,
                   timeout: float = 600.0) -> CachedReference:
    """The reference values of every row from ``tensorcache``: an export file, or
    ``host:port[,host:port...]/cache-id`` of nodes' lookup ports (``token``/``tls`` as for
    :class:`tensorcache.TensorCacheClient`)."""
    text = os.fspath(tensorcache)
    if os.path.exists(text) or text.endswith(".safetensors"):
        export = load_export(text)
        missing = export.missing_ranges()
        if missing:
            spans = ", ".join(f"{a}-{b - 1}" for a, b in missing[:8])
            raise TensorCacheError(
                f"export '{text}' lacks examples {spans}{' ...' if len(missing) > 8 else ''} of "
                f"{export.n}: fill the cache, then export it again (./tensorcache export)")
        _check_fields(text, export.values.keys())
        v = export.values
        return CachedReference(text, dict(export.inputs), *(np.asarray(v[f]) for f in _FIELDS))
    endpoints, sep, cache = text.rpartition("/")
    if not sep or not endpoints or not cache:
        raise TensorCacheError(f"tensorcache={text!r}: no such file, and not host:port/cache-id")
    from .client import TensorCacheClient

    with TensorCacheClient(endpoints.split(","), timeout=timeout, token=token, tls=tls) as client:
        info = client.describe(cache)
        _check_fields(text, [f.name for f in info.fields])
        inputs = client.inputs(cache)
        out = {f: np.empty(info.n, dtype=np.float32 if f.endswith("logp") else np.int32)
               for f in _FIELDS}
        for start in range(0, info.n, _LOOKUP_BATCH):
            got = client.lookup(cache, np.arange(start, min(info.n, start + _LOOKUP_BATCH)))
            for f in _FIELDS:
                out[f][start:start + len(got[f])] = got[f]
    return CachedReference(text, inputs, *(out[f] for f in _FIELDS))


def _check_fields(where: str, names: Any) -> None:
    missing = [f for f in _FIELDS if f not in set(names)]
    if missing:
        raise TensorCacheError(f"{where} holds fields {sorted(names)}, not the reference "
                               f"log-probs {list(_FIELDS)}: fill it with --runner logprob")


def _is_conversational(row: Mapping[str, Any]) -> bool:
    for key in ("prompt", "chosen", "rejected"):
        value = row.get(key)
        if isinstance(value, list) and value and isinstance(value[0], Mapping) and "role" in value[0]:
            return True
    return False


def _short(v: Optional[str]) -> str:
    if v is None:
        return "not recorded"
    return v[:16] + "..." if len(v) > 24 and all(c in "0123456789abcdef" for c in v) else repr(v)


def _fill_hint(inputs: Mapping[str, str], args: Any) -> str:
    max_length = getattr(args, "max_length", None)
    mode = getattr(args, "truncation_mode", "keep_start")
    model_dir = inputs.get("model_dir", "DIR")
    return ("fill the cache of these rows and this model: ./tensorcache fill --model-dir "
            f"{model_dir} --dataset FILE --max-length {max_length or 0} --truncation-mode {mode}"
            " (FILE: these rows as JSONL, or scripts/prepare_dataset.py's output for them), then"
            " pass its cache id or export")


class _Differences:
    def __init__(self, where: str, inputs: Mapping[str, str]) -> None:
        self.where, self.inputs, self.lines = where, inputs, []  # type: ignore[var-annotated]

    def compare(self, what: str, key: str, given: Optional[str], detail: str = "") -> None:
        recorded = self.inputs.get(key)
        if recorded != given:
            self.lines.append(f"  {what} ({key}): cache {_short(recorded)}, given {_short(given)}"
                              + (f" {detail}" if detail else ""))

    def raise_if_any(self, args: Any) -> None:
        if self.lines:
            raise CacheMismatch(f"the cache {self.where} was not filled from what this trainer is "
                                "given:\n" + "\n".join(self.lines) + "\n" + _fill_hint(self.inputs, args))


def check_rows(ref: CachedReference, dataset: Any, args: Any = None) -> None:
    """Checks the rows, their count and the truncation settings against the cache's inputs."""
    d = _Differences(ref.where, ref.inputs)
    n = len(dataset)
    d.compare("row count", "n", str(n))
    d.compare("data set rows", "rows_sha256", rows_digest(dataset),
              f"(the rows' prompt/chosen/rejected/tools/chat_template_kwargs; {n} rows given)")
    if args is not None:
        max_length = getattr(args, "max_length", None)
        d.compare("DPOConfig.max_length", "max_length", str(max_length or 0))
        d.compare("DPOConfig.truncation_mode", "truncation_mode", getattr(args, "truncation_mode", None))
    if ref.inputs.get("runner_kind") not in (None, "logprob"):
        d.lines.append(f"  runner (runner_kind): cache {ref.inputs.get('runner_kind')!r}, expected "
                       "'logprob' (TRL's reference log-probs)")
    d.raise_if_any(args)


def check_model(ref: CachedReference, model: Any, processing_class: Any, conversational: bool,
                args: Any = None) -> None:
    """Checks the model's weights and the tokenizer against the cache's inputs."""
    d = _Differences(ref.where, ref.inputs)
    d.compare("model weights", "model_state_sha256", state_digest(model),
              "(the model given must be the reference the cache was filled with)")
    d.compare("tokenizer", "tokenizer_state_sha256", tokenizer_digest(processing_class))
    if conversational:
        d.compare("chat template", "chat_template_sha256", chat_template_digest(processing_class))
    else:
        d.compare("EOS token", "eos_token", getattr(processing_class, "eos_token", None))
    d.raise_if_any(args)


def attach_ref_logps(dataset: Any, ref: CachedReference) -> Any:
    """The raw rows with the cache's values as columns ``ref_chosen_logps``/``ref_rejected_logps``
    (and the counted completion tokens), by row number; call :func:`check_rows` first."""
    for name in REF_COLUMNS + TOKEN_COLUMNS:
        if name in dataset.column_names:
            dataset = dataset.remove_columns(name)
    values = (ref.chosen_logp, ref.rejected_logp, ref.chosen_tokens, ref.rejected_tokens)
    for name, column in zip(REF_COLUMNS + TOKEN_COLUMNS, values):
        dataset = dataset.add_column(name, column)
    return dataset


def counted_tokens(prompt: Any, completion: Any, max_length: Optional[int], mode: str) -> Any:
    """Completion tokens TRL sums the log-probs of, for prompts and completions of these lengths
    (ints or int arrays): the sequence is cut to ``max_length`` as TRL's collator cuts it, and the
    first token of the cut sequence has no log-prob."""
    p, c = np.asarray(prompt, dtype=np.int64), np.asarray(completion, dtype=np.int64)
    total, start = p + c, np.zeros_like(p)
    if max_length:
        if mode == "keep_start":
            total = np.minimum(total, max_length)
        else:
            start = np.maximum(0, total - max_length)
    return np.maximum(0, (total - start) - np.maximum(1, p - start))


def check_token_counts(where: str, dataset: Any, max_length: Optional[int], mode: str) -> None:
    """Checks, on TRL's tokenized rows, that each row's completion token counts equal those the
    cache summed over: a last guard that the values sit on the rows they were computed for."""
    import pyarrow.compute as pc

    table = dataset.with_format("arrow")[:]
    p = pc.list_value_length(table.column("prompt_ids")).to_numpy()
    for side in ("chosen", "rejected"):
        want = counted_tokens(p, pc.list_value_length(table.column(f"{side}_ids")).to_numpy(),
                              max_length, mode)
        got = table.column(f"tensorcache_{side}_tokens").to_numpy()
        bad = np.flatnonzero(want != got)
        if bad.size:
            i = int(bad[0])
            raise CacheMismatch(
                f"{bad.size} rows of the tokenized data set, the first row {i} (after TRL's "
                f"filtering): the cache {where} summed {got[i]} {side} completion tokens, TRL's "
                f"tokenization gives {want[i]}: the cache was filled from other rows or another "
                "tokenizer; fill the cache of these rows again")


def with_tensorcache(trainer_class: type) -> type:
    """A subclass of ``trainer_class`` (``trl.DPOTrainer`` or a subclass of it) that takes the
    reference log-probs from TensorCache: extra keyword arguments ``tensorcache`` (train rows),
    ``eval_tensorcache`` (eval rows: one source, or a dict like ``eval_dataset``),
    ``tensorcache_token``/``tensorcache_tls`` (lookup port credentials) and
    ``tensorcache_check_model`` (False skips only the model and tokenizer digests, for a policy
    that is not the reference's own weights, e.g. a PEFT wrapper: use with care)."""

    class TensorCacheTrainer(trainer_class):  # type: ignore[misc, valid-type]
        def __init__(self, model: Any = None, ref_model: Any = None, args: Any = None,
                     data_collator: Any = None, train_dataset: Any = None, eval_dataset: Any = None,
                     processing_class: Any = None, *, tensorcache: Optional[Source] = None,
                     eval_tensorcache: Any = None, tensorcache_token: Optional[str] = None,
                     tensorcache_tls: Any = None, tensorcache_check_model: bool = True,
                     **kwargs: Any) -> None:
            if tensorcache is None:
                raise TypeError("tensorcache= is required: host:port/cache-id or an export file")
            if ref_model is not None:
                raise ValueError("ref_model given: with tensorcache= the reference log-probs come "
                                 "from the cache; pass ref_model=None")
            if args is None or not getattr(args, "precompute_ref_log_probs", False):
                raise ValueError("tensorcache= needs DPOConfig(precompute_ref_log_probs=True): "
                                 "without it TRL runs a reference model every step")
            if train_dataset is None or not hasattr(train_dataset, "add_column"):
                raise TypeError(f"train_dataset of type {type(train_dataset).__name__}: tensorcache= "
                                "needs a datasets.Dataset (map-style)")
            read = lambda s: read_reference(s, tensorcache_token, tensorcache_tls)  # noqa: E731
            refs = [read(tensorcache)]
            check_rows(refs[0], train_dataset, args)
            train_dataset = attach_ref_logps(train_dataset, refs[0])
            if eval_dataset is not None:
                eval_dataset, eval_refs = self._attach_eval(eval_dataset, eval_tensorcache, read, args)
                refs += eval_refs
            conversational = _is_conversational(train_dataset[0])
            super().__init__(model, ref_model=None, args=args, data_collator=data_collator,
                             train_dataset=train_dataset, eval_dataset=eval_dataset,
                             processing_class=processing_class, **kwargs)
            if tensorcache_check_model:
                for ref in refs:
                    check_model(ref, self.model, self.processing_class, conversational, args)
            self.train_dataset = self._checked(self.train_dataset, refs[0].where, args)
            if isinstance(self.eval_dataset, dict):
                where = dict(zip(sorted(self.eval_dataset), (r.where for r in refs[1:])))
                self.eval_dataset = {k: self._checked(v, where[k], args)
                                     for k, v in self.eval_dataset.items()}
            elif self.eval_dataset is not None:
                self.eval_dataset = self._checked(self.eval_dataset, refs[-1].where, args)

        @staticmethod
        def _attach_eval(eval_dataset: Any, sources: Any, read: Any, args: Any) -> Tuple[Any, List[CachedReference]]:
            if sources is None:
                raise TypeError("eval_dataset given without eval_tensorcache=: its reference "
                                "log-probs come from a cache of its own rows")
            if isinstance(eval_dataset, dict):
                if not isinstance(sources, Mapping) or set(sources) != set(eval_dataset):
                    raise TypeError(f"eval_tensorcache must be a dict with the keys of eval_dataset "
                                    f"{sorted(eval_dataset)}")
                refs = {k: read(sources[k]) for k in sorted(eval_dataset)}
                for k, ref in refs.items():
                    check_rows(ref, eval_dataset[k], args)
                return ({k: attach_ref_logps(v, refs[k]) for k, v in eval_dataset.items()},
                        list(refs.values()))
            ref = read(sources)
            check_rows(ref, eval_dataset, args)
            return attach_ref_logps(eval_dataset, ref), [ref]

        @staticmethod
        def _checked(dataset: Any, where: str, args: Any) -> Any:
            check_token_counts(where, dataset, args.max_length, args.truncation_mode)
            return dataset.remove_columns(list(TOKEN_COLUMNS))

        def _precompute_ref_logps(self, dataset: Any, name: str, batch_size: int) -> Any:
            if all(c in dataset.column_names for c in REF_COLUMNS):
                return dataset  # attached from the cache: nothing to compute
            raise TensorCacheError(f"the {name} data set has no reference log-probs from the cache; "
                                   "nothing is computed here")

    TensorCacheTrainer.__name__ = TensorCacheTrainer.__qualname__ = f"TensorCache{trainer_class.__name__}"
    return TensorCacheTrainer


DPOTrainer = with_tensorcache(_TrlDPOTrainer)
DPOTrainer.__doc__ = ("TRL's DPOTrainer with the reference log-probs from TensorCache: "
                      "``DPOTrainer(model, args=..., train_dataset=ds, processing_class=tok, "
                      "tensorcache='host:port/cache-id' or an export file)``.")
