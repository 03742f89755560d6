"""scripts/export_hf_model.py: the split causal-lm export (body.pt + head.pt, format 2) equals the
eager model's logits, keeps what a model does to logits after its head, falls back to the
logits-only model.pt when the split cannot be verified, and leaves nothing behind on failure."""

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import export_hf_model  # noqa: E402

CHECK_LENGTH = 12
CORPUS = ["the cat sat on the mat", "a dog ran fast", "Hello world: naïve café, 日本語 🙂",
          "tabs\tand\nnewlines", "one two three four five six seven"] * 4


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>")


def _ids(tokenizer):
    return dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                eos_token_id=tokenizer.eos_token_id)


def _scaled(model, factor):
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.mul_(factor)
    return model.eval()


def tiny_llama(tokenizer, cls=None):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=len(tokenizer) + 4, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=64, tie_word_embeddings=False,
                         attn_implementation="sdpa", **_ids(tokenizer))
    return _scaled((cls or LlamaForCausalLM)(config), 4.0)


def tiny_gemma2(tokenizer, cap):
    from transformers import Gemma2Config, Gemma2ForCausalLM

    torch.manual_seed(2)
    config = Gemma2Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
                          num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                          head_dim=8, max_position_embeddings=64, sliding_window=32,
                          final_logit_softcapping=cap, attn_logit_softcapping=None,
                          attn_implementation="eager", **_ids(tokenizer))
    return _scaled(Gemma2ForCausalLM(config), 8.0)


def _padded(rows, pad_id):
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return ids, mask


def _rows(tokenizer):
    texts = ["the cat sat on the mat", "Hello world", "a dog ran fast, 日本語 🙂 one two three"]
    return [tokenizer(t)["input_ids"] for t in texts]


def _meta(out):
    return json.loads((out / "tensorcache-model.json").read_text(encoding="utf-8"))


def _assert_split_equals_eager(out, model, tokenizer):
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".pt") == ["body.pt", "head.pt"]
    body = torch.jit.load(str(out / "body.pt")).eval()
    head = torch.jit.load(str(out / "head.pt")).eval()
    rows = _rows(tokenizer)
    ids, mask = _padded(rows, tokenizer.pad_token_id)
    with torch.no_grad():
        hidden = body(ids, mask)
        assert hidden.dtype == torch.float32
        assert list(hidden.shape) == [ids.shape[0], ids.shape[1], model.config.hidden_size]
        got = head(hidden[mask.bool()])
        assert got.dtype == torch.float32
        want = torch.cat([model(input_ids=torch.tensor([r])).logits[0] for r in rows])
        assert list(got.shape) == list(want.shape)
        scale = max(1.0, float(want.abs().max()))
        assert float((got - want).abs().max()) <= 1e-4 * scale
        for n in (1, 2, 7):
            part = hidden[mask.bool()][:n]
            assert torch.allclose(head(part), got[:n], rtol=0, atol=1e-5 * scale)
    return hidden, head


def test_split_export_equals_eager_logits(tmp_path, tokenizer):
    model = tiny_llama(tokenizer)
    lines = []
    out = export_hf_model.export(model, tokenizer, tmp_path / "llama", "causal-lm", "tiny llama",
                                 max_check_length=CHECK_LENGTH, log=lines.append)
    assert not (out / "model.pt").exists()
    _assert_split_equals_eager(out, model, tokenizer)
    meta = _meta(out)
    assert meta["format_version"] == 2
    assert meta["task"] == "causal-lm"
    assert meta["files"] == {"body": "body.pt", "head": "head.pt"}
    assert meta["vocab_size"] == len(tokenizer) + 4  # the head's width, not the tokenizer's
    assert meta["tokenizer_vocab_size"] == len(tokenizer)
    assert (meta["hidden_size"], meta["num_hidden_layers"], meta["num_attention_heads"],
            meta["num_key_value_heads"], meta["head_dim"], meta["intermediate_size"],
            meta["max_positions"]) == (16, 1, 2, 1, 8, 32, 64)
    assert meta["head_postprocess"] == []
    for key in ("architecture", "pad_token_id", "bos_token_id", "eos_token_id", "eos_token",
                "dtype", "torch_version", "transformers_version"):
        assert key in meta
    assert not any("note:" in line for line in lines), lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llama"]


def test_gemma2_final_logit_softcapping_is_part_of_the_head(tmp_path, tokenizer):
    if not hasattr(transformers, "Gemma2ForCausalLM"):
        pytest.skip("this transformers has no Gemma2")
    cap = 0.5
    model = tiny_gemma2(tokenizer, cap)
    out = export_hf_model.export(model, tokenizer, tmp_path / "gemma2", "causal-lm", "tiny gemma2",
                                 max_check_length=CHECK_LENGTH, log=lambda _: None)
    hidden, head = _assert_split_equals_eager(out, model, tokenizer)
    assert _meta(out)["head_postprocess"] == [{"op": "softcap", "value": cap}]
    ids, mask = _padded(_rows(tokenizer), tokenizer.pad_token_id)
    with torch.no_grad():
        flat = hidden[mask.bool()]
        capped = head(flat)
        raw = model.get_output_embeddings()(flat)
    # the raw head goes well past the cap, so the softcapping is what makes head.pt exact
    assert float(raw.abs().max()) > 2 * cap
    assert float(capped.abs().max()) <= cap
    assert torch.allclose(capped, torch.tanh(raw / cap) * cap, atol=1e-5)


def test_logits_only_writes_model_pt(tmp_path, tokenizer):
    model = tiny_llama(tokenizer)
    src = tmp_path / "hf"
    model.save_pretrained(str(src))
    tokenizer.save_pretrained(str(src))
    out = tmp_path / "v1"
    assert export_hf_model.main(["--model", str(src), "--out", str(out), "--logits-only",
                                 "--max-check-length", str(CHECK_LENGTH)]) == 0
    assert not (out / "body.pt").exists() and not (out / "head.pt").exists()
    meta = _meta(out)
    assert meta["format_version"] == 1 and "files" not in meta
    traced = torch.jit.load(str(out / "model.pt")).eval()
    rows = _rows(tokenizer)
    ids, mask = _padded(rows, tokenizer.pad_token_id)
    with torch.no_grad():
        got = traced(ids, mask)
        assert list(got.shape) == [ids.shape[0], ids.shape[1], len(tokenizer) + 4]
        for i, r in enumerate(rows):
            want = model(input_ids=torch.tensor([r])).logits[0]
            assert float((got[i, : len(r)] - want).abs().max()) <= 1e-4 * max(1.0, float(want.abs().max()))

    split_out = tmp_path / "v2"
    assert export_hf_model.main(["--model", str(src), "--out", str(split_out),
                                 "--max-check-length", str(CHECK_LENGTH)]) == 0
    assert _meta(split_out)["format_version"] == 2
    assert not (split_out / "model.pt").exists()
    assert (split_out / "tokenizer.json").read_bytes() == (out / "tokenizer.json").read_bytes()


def test_a_split_that_cannot_be_verified_falls_back_to_model_pt(tmp_path, tokenizer):
    from transformers import LlamaForCausalLM

    class DoubledLogits(LlamaForCausalLM):
        """Changes its logits after the head in a way no config attribute announces."""

        def forward(self, *args, **kwargs):
            out = super().forward(*args, **kwargs)
            out.logits = out.logits * 2.0
            return out

    model = tiny_llama(tokenizer, DoubledLogits)
    lines = []
    out = export_hf_model.export(model, tokenizer, tmp_path / "odd", "causal-lm", "odd llama",
                                 max_check_length=CHECK_LENGTH, log=lines.append)
    notes = [line for line in lines if line.startswith("note: the split export")]
    assert len(notes) == 1 and "head(body) differs from the eager model" in notes[0], lines
    assert "model.pt (format 1)" in notes[0]
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".pt") == ["model.pt"]
    assert _meta(out)["format_version"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["odd"]


def test_a_failed_verification_leaves_nothing_behind(tmp_path, tokenizer, monkeypatch, capsys):
    model = tiny_llama(tokenizer)
    src = tmp_path / "hf"
    model.save_pretrained(str(src))
    tokenizer.save_pretrained(str(src))
    parent = tmp_path / "models"
    parent.mkdir()
    monkeypatch.setattr(export_hf_model, "RELATIVE_TOLERANCE", -1.0)  # nothing can pass
    code = export_hf_model.main(["--model", str(src), "--out", str(parent / "m"),
                                 "--max-check-length", str(CHECK_LENGTH)])
    assert code == 2
    err = capsys.readouterr().err
    assert "note: the split export" in err and "error: the traced model differs" in err, err
    assert list(parent.iterdir()) == []

    # an existing directory is kept as it was when --overwrite fails
    (parent / "m").mkdir()
    (parent / "m" / "keep.txt").write_text("old", encoding="utf-8")
    with pytest.raises(export_hf_model.ExportError):
        export_hf_model.export(model, tokenizer, parent / "m", "causal-lm", "tiny llama",
                               max_check_length=CHECK_LENGTH, overwrite=True, log=lambda _: None)
    assert sorted(p.name for p in parent.iterdir()) == ["m"]
    assert [p.name for p in (parent / "m").iterdir()] == ["keep.txt"]


def test_hidden_states_task_is_unchanged(tmp_path, tokenizer):
    from transformers import BertConfig, BertModel

    torch.manual_seed(3)
    encoder = BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                                   num_attention_heads=2, intermediate_size=32,
                                   max_position_embeddings=64,
                                   pad_token_id=tokenizer.pad_token_id), add_pooling_layer=False)
    out = export_hf_model.export(encoder, tokenizer, tmp_path / "enc", "hidden-states", "tiny bert",
                                 max_check_length=CHECK_LENGTH, log=lambda _: None)
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".pt") == ["model.pt"]
    assert _meta(out)["format_version"] == 1


TEMPLATE = "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"


def test_the_digests_of_model_tokenizer_and_template_are_recorded(tmp_path, tokenizer):
    import hashlib

    from transformers import AutoModelForCausalLM, AutoTokenizer

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from tensorcache import digests

    src = tmp_path / "hf"
    tiny_llama(tokenizer).save_pretrained(str(src))
    tokenizer.save_pretrained(str(src))
    templated = AutoTokenizer.from_pretrained(str(src))
    templated.chat_template = TEMPLATE
    templated.save_pretrained(str(src))
    outs = {"split": tmp_path / "v2", "logits-only": tmp_path / "v1"}
    for kind, out in outs.items():
        extra = ["--logits-only"] if kind == "logits-only" else []
        assert export_hf_model.main(["--model", str(src), "--out", str(out),
                                     "--max-check-length", str(CHECK_LENGTH), *extra]) == 0

    model = AutoModelForCausalLM.from_pretrained(str(src))
    again = AutoTokenizer.from_pretrained(str(src))
    want = {"model_state_sha256": digests.state_digest(model),
            "tokenizer_state_sha256": digests.tokenizer_digest(again),
            "chat_template_sha256": hashlib.sha256(TEMPLATE.encode("utf-8")).hexdigest()}
    assert want["chat_template_sha256"] == digests.chat_template_digest(again)
    for kind, out in outs.items():
        meta = _meta(out)
        assert {k: meta[k] for k in want} == want, kind
        # a trainer that loads the tokenizer from the exported directory gets the same state
        exported = AutoTokenizer.from_pretrained(str(out))
        assert digests.tokenizer_digest(exported) == want["tokenizer_state_sha256"], kind
        assert digests.chat_template_digest(exported) == want["chat_template_sha256"], kind
    # the exporter's float32 copy, not a lower-precision one
    half = AutoModelForCausalLM.from_pretrained(str(src), dtype=torch.bfloat16)
    assert digests.state_digest(half) != want["model_state_sha256"]


def test_a_tokenizer_without_a_chat_template_records_null(tmp_path, tokenizer):
    out = export_hf_model.export(tiny_llama(tokenizer), tokenizer, tmp_path / "m", "causal-lm",
                                 "tiny llama", max_check_length=CHECK_LENGTH, log=lambda _: None)
    meta = _meta(out)
    assert meta["chat_template_sha256"] is None
    assert len(meta["model_state_sha256"]) == 64 and len(meta["tokenizer_state_sha256"]) == 64
