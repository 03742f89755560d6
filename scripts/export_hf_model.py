#!/usr/bin/env python3
"""Export a Hugging Face model to a TorchScript model directory that TensorCache can load.

A causal language model (task ``causal-lm``) is exported split in two (format version 2):

* ``body.pt``: a traced module ``forward(input_ids, attention_mask)`` taking int64 ``[B, T]``
  tensors, right-padded, and returning float32 ``[B, T, H]`` hidden states: exactly what the
  output head takes (after the final norm);
* ``head.pt``: a traced module ``forward(hidden)`` taking float32 ``[N, H]`` and returning float32
  ``[N, V]`` logits: the output head plus whatever the model does to logits after it
  (``final_logit_softcapping`` of Gemma 2/3, ``logit_scale`` of Cohere, ``logits_scaling`` of
  Granite), so that only the positions that are scored need the ``V``-wide head.

The logits-only format (version 1, ``--logits-only``) and task ``hidden-states`` write one file
instead:

* ``model.pt``: a traced module ``forward(input_ids, attention_mask)`` taking int64 ``[B, T]``
  tensors, right-padded, and returning float32 ``[B, T, V]`` logits (task ``causal-lm``) or
  ``[B, T, H]`` last hidden states (task ``hidden-states``).

Every directory also holds:

* ``tokenizer.json``, ``tokenizer_config.json`` and ``chat_template.jinja`` (when the tokenizer
  has a chat template), written by ``tokenizer.save_pretrained``;
* ``tensorcache-model.json``: what the model is, which token ids it uses, and (format 2) which
  files hold the body and the head, with the dimensions needed to estimate memory; and the
  digests a trainer checks its own model and tokenizer against (``tensorcache.digests``):
  ``model_state_sha256`` (the state of the model as given to the export, before it is put in
  float32), ``tokenizer_state_sha256`` and ``chat_template_sha256`` (null without a template).

Before anything is written the saved TorchScript files are reloaded and checked against the
eager model: other batch sizes and lengths must give the same outputs at non-pad positions
(``head(body(ids, mask))`` at non-pad positions against the eager logits for a split export), and
the attention mask must still change the output (a graph that ignores the mask would silently give
wrong values for padded batches). A model whose split export cannot be verified this way (one
that changes its logits in a way not listed above, say) is exported in the logits-only format
instead, with a note saying why. All files are written to a temporary directory beside the target
and renamed into place at the end, so a failed export leaves nothing behind.

Only right padding is supported: position ids are derived from token positions, not from the
mask.

Example::

    python scripts/export_hf_model.py --model gpt2 --out models/gpt2
    python scripts/export_hf_model.py --model gpt2 --out models/gpt2-v1 --logits-only
    python scripts/export_hf_model.py --model ./my-encoder --out models/enc --task hidden-states

The function :func:`export` can be imported to export an already loaded model. Its parts (loading,
tracing, the split, the metadata) are the modules of ``hf_export/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

from hf_export import (BODY_FILE, FORMAT_VERSION, HEAD_FILE, METADATA_FILE, MODEL_FILE,
                       TOKENIZER_FILE, ExportError, Log, stderr)
from hf_export.load import DTYPES, TASKS, check_task, load_model, load_tokenizer
from hf_export.metadata import build_metadata, build_split_metadata, input_digests, token_id
from hf_export.split import export_split
from hf_export.trace import (check_output, export_logits_only, first_attr, random_rows,
                             right_padded, text_config, wrap)

DEFAULT_MAX_CHECK_LENGTH = 64
# Traced outputs must match the eager model within this fraction of the largest |value|.
RELATIVE_TOLERANCE = 1e-4


def _prepare_target(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"--out '{out_dir}' exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise ExportError(f"--out '{out_dir}' exists and is not empty (pass --overwrite to replace it)")


def make_temp_dir(parent: Path, name: str) -> Path:
    """A new hidden directory in ``parent`` with the permissions a plain mkdir would give."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    return tmp


def move_into_place(tmp: Path, out_dir: Path) -> None:
    """Rename the finished temporary directory to ``out_dir``, replacing an old one."""
    old: Optional[Path] = None
    if out_dir.is_dir() and any(out_dir.iterdir()):
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        os.rename(out_dir, old / out_dir.name)
    elif out_dir.is_dir():
        out_dir.rmdir()
    os.rename(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)



def export(model: Any, tokenizer: Any, out_dir: "str | os.PathLike[str]", task: str, source: str,
           *, max_check_length: int = DEFAULT_MAX_CHECK_LENGTH, overwrite: bool = False,
           log: Log = stderr, split: bool = True) -> Path:
    """Trace ``model``, check the saved files, and write a TensorCache model directory.

    Args:
        model: a loaded transformers model (causal LM for ``causal-lm``, any model with a
            ``last_hidden_state`` for ``hidden-states``); it is put in eval mode and float32.
        tokenizer: its fast tokenizer; saved with ``save_pretrained``.
        out_dir: the directory to create; its parent is created if missing.
        task: ``causal-lm`` or ``hidden-states``.
        source: where the model came from, recorded in ``tensorcache-model.json``.
        max_check_length: the longest sequence used to check the traced model.
        overwrite: replace an existing non-empty ``out_dir``.
        log: receives progress lines.
        split: for ``causal-lm``, write ``body.pt`` + ``head.pt`` (format 2) when that split can be
            verified, else (with a note to ``log``) the logits-only ``model.pt``; ``False`` always
            writes ``model.pt`` (format 1). Ignored for ``hidden-states``.

    Returns:
        The path of the finished directory.

    Raises:
        ExportError: the model or tokenizer cannot be exported as asked; nothing is written.
    """
    import torch

    check_task(task)
    if max_check_length < 3:
        raise ExportError(f"--max-check-length {max_check_length} is too small, expected at least 3")
    out_dir = Path(out_dir).absolute()
    _prepare_target(out_dir, overwrite)
    if getattr(model.config, "is_encoder_decoder", False):
        raise ExportError(f"'{source}' is an encoder-decoder model; only decoder-only language "
                          "models and encoders taking (input_ids, attention_mask) are supported")

    if getattr(tokenizer, "is_fast", True) is False:
        raise ExportError(f"the tokenizer of '{source}' ({type(tokenizer).__name__}) is a slow "
                          f"tokenizer that cannot write {TOKENIZER_FILE}; only fast (tokenizers "
                          "library) tokenizers are supported")
    # what a trainer holding the same model and tokenizer computes again; taken before the
    # model is changed here
    state_digests = input_digests(model, tokenizer)
    model = model.to(torch.float32).eval()
    config = text_config(model)
    if task == "causal-lm":
        last_dim = first_attr(config, ("vocab_size",))
    else:
        last_dim = first_attr(config, ("hidden_size", "n_embd", "d_model", "dim"))
    max_positions = first_attr(config, ("max_position_embeddings", "n_positions"))
    check_len = min(max_check_length, max_positions) if max_positions else max_check_length
    vocab_limit = last_dim if task == "causal-lm" and last_dim else first_attr(config, ("vocab_size",))
    id_limit = min(x for x in (vocab_limit, len(tokenizer)) if x)
    if task == "causal-lm" and last_dim is not None and len(tokenizer) > last_dim:
        log(f"warning: the tokenizer has {len(tokenizer)} tokens but the model's vocabulary has "
            f"{last_dim}; ids >= {last_dim} cannot be scored")
    pad_id = token_id(tokenizer, "pad_token_id")
    if pad_id is None or pad_id >= id_limit:
        pad_id = token_id(tokenizer, "eos_token_id")
    if pad_id is None or pad_id >= id_limit:
        pad_id = 0

    # the traced code names the wrapper classes after this module (__main__ from the command line)
    wrapper = wrap(model, task, __name__)
    # Example batch: two right-padded rows of different lengths, so the traced graph keeps the
    # padding path of the attention mask.
    example_ids, example_mask = right_padded(random_rows([7, 4], id_limit, seed=7), pad_id)
    with torch.no_grad():
        try:
            eager_out = wrapper(example_ids, example_mask)
        except Exception as e:  # noqa: BLE001 - any failure here means the model is unusable
            raise ExportError(f"'{source}' cannot run forward(input_ids, attention_mask) for task "
                              f"'{task}': {type(e).__name__}: {e}") from e
        check_output(eager_out, 2, 7, last_dim, task, f"the model '{source}'")
        if last_dim is None:
            last_dim = int(eager_out.shape[2])

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(out_dir.parent, out_dir.name)
    try:
        split_dims: Optional[Tuple[int, int, List[Tuple[str, float]]]] = None
        if split and task == "causal-lm":
            try:
                split_dims = export_split(model, wrapper, tmp, source, example_ids, example_mask,
                                          last_dim, id_limit, pad_id, check_len,
                                          RELATIVE_TOLERANCE, log, __name__)
            except Exception as e:  # noqa: BLE001 - any failure of the split means format 1
                for name in (BODY_FILE, HEAD_FILE):
                    (tmp / name).unlink(missing_ok=True)
                why = str(e) if isinstance(e, ExportError) else f"{type(e).__name__}: {e}"
                log(f"note: the split export ({BODY_FILE} + {HEAD_FILE}) of '{source}' cannot be "
                    f"used: {why}; writing the logits-only {MODEL_FILE} (format {FORMAT_VERSION}) "
                    "instead")
        if split_dims is None:
            export_logits_only(wrapper, tmp, task, source, model, example_ids, example_mask,
                               last_dim, id_limit, pad_id, check_len, RELATIVE_TOLERANCE, log)

        tokenizer.save_pretrained(str(tmp))
        if not (tmp / TOKENIZER_FILE).is_file():
            raise ExportError(
                f"the tokenizer of '{source}' ({type(tokenizer).__name__}) did not write "
                f"{TOKENIZER_FILE}; only fast (tokenizers library) tokenizers are supported"
            )
        _check_saved_tokenizer(tokenizer, tmp)
        if split_dims is None:
            metadata = build_metadata(model, tokenizer, task, source, last_dim)
        else:
            metadata = build_split_metadata(model, tokenizer, source, *split_dims)
        metadata.update(state_digests)
        with open(tmp / METADATA_FILE, "w", encoding="utf-8") as f:
            json.dump(metadata, f, indent=2, ensure_ascii=False)
            f.write("\n")
        move_into_place(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"wrote {out_dir}")
    return out_dir



def _check_saved_tokenizer(tokenizer: Any, saved_dir: Path) -> None:
    """The saved tokenizer must encode like the one in memory."""
    from transformers import AutoTokenizer

    sample = "Hello world: naïve café, 日本語 🙂\n\tend."
    reloaded = AutoTokenizer.from_pretrained(str(saved_dir))
    for special in (True, False):
        a = tokenizer(sample, add_special_tokens=special)["input_ids"]
        b = reloaded(sample, add_special_tokens=special)["input_ids"]
        if a != b:
            raise ExportError(
                f"the saved tokenizer encodes differently from the loaded one "
                f"(add_special_tokens={special}): {b} instead of {a}"
            )


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="export_hf_model.py",
        description=(
            "Export a Hugging Face model and its tokenizer to a TensorCache model directory. "
            "Task causal-lm writes body.pt (TorchScript, forward(input_ids, attention_mask) -> "
            "hidden states [B,T,H], right padding) and head.pt (forward(hidden [N,H]) -> logits "
            "[N,V], including any logit softcapping or scaling the model applies), or with "
            "--logits-only (and wherever the split cannot be verified) a single model.pt "
            "returning logits [B,T,V]; task hidden-states writes model.pt returning [B,T,H]. "
            "Also tokenizer.json + tokenizer_config.json (+ chat_template.jinja) and "
            "tensorcache-model.json. The traced files are reloaded and checked against the eager "
            "model before anything is written."
        ),
        epilog="Exit codes: 0 exported, 2 bad argument or model that cannot be exported, "
               "1 unexpected failure.",
    )
    parser.add_argument("--model", required=True, metavar="NAME_OR_DIR",
                        help="a model directory, or a hub name where the hub can be reached")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory to create (must not exist or be empty, unless --overwrite)")
    parser.add_argument("--task", choices=TASKS, default="causal-lm",
                        help="causal-lm: a language model (AutoModelForCausalLM) scored through "
                             "body.pt + head.pt, or model.pt logits [B,T,V] with --logits-only; "
                             "hidden-states: model.pt returning last hidden states [B,T,H] "
                             "(AutoModel). Default: %(default)s")
    parser.add_argument("--dtype", choices=DTYPES, default="float32",
                        help="weights and outputs dtype. Default: %(default)s")
    parser.add_argument("--max-check-length", type=int, default=DEFAULT_MAX_CHECK_LENGTH,
                        metavar="N",
                        help="longest sequence used to check the traced files against the eager "
                             "model (capped at the model's positions). Default: %(default)s")
    parser.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa",
                        help="attention implementation to trace (default: %(default)s, the faster;"
                             " eager where a model's sdpa export fails its checks)")
    parser.add_argument("--logits-only", action="store_true",
                        help="causal-lm: write the format 1 model.pt returning full logits [B,T,V] "
                             "instead of body.pt + head.pt (format 2); no effect on hidden-states")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace DIR if it exists and is not empty")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if args.max_check_length < 3:
            raise ExportError(f"--max-check-length {args.max_check_length} is too small, "
                              "expected at least 3")
        _prepare_target(Path(args.out).absolute(), args.overwrite)
        model = load_model(args.model, args.task, args.dtype, attn=args.attn)
        tokenizer = load_tokenizer(args.model)
        export(model, tokenizer, args.out, args.task, args.model,
               max_check_length=args.max_check_length, overwrite=args.overwrite,
               split=not args.logits_only)
    except ExportError as e:
        stderr(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
