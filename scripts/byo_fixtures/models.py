"""The seeded tokenizers (byte-level BPE) and the tiny models: Llama, GPT-2, BERT, and the
wide-vocabulary Qwen2, with weights scaled so that log-probs are informative."""

from __future__ import annotations

from typing import Any, Dict, Sequence

from byo_fixtures import (BOS, EOS, MAX_POSITIONS, PAD, SPECIAL_TOKENS, VOCAB_SIZE, WEIGHT_SCALE,
                          WIDE_EOS, WIDE_MAX_POSITIONS, WIDE_PAD, WIDE_SPECIAL_TOKENS,
                          WIDE_TOKENIZER_SIZE, WIDE_VOCAB_SIZE, FixtureError)



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
