"""A small DPO loop in PyTorch whose reference log-probabilities come from TensorCache.

The policy starts as a copy of the reference model (a TorchScript export made by
scripts/export_hf_model.py, e.g. model-runner/src/test/resources/byo/llama), trained on token-id
rows ({"prompt_ids", "chosen_ids", "rejected_ids"} per line). The reference log-probs of each
batch are looked up in the cache that `./tensorcache node --model-dir ... --dataset ...` serves,
so the reference model never runs here. At the first step the policy is the reference, so the
loss is log 2 = 0.6931 when the cache holds what this model computes.

    python python/examples/dpo_loop.py --endpoint 127.0.0.1:7400 --cache dpo-ref-... \
        --model-dir model-runner/src/test/resources/byo/llama \
        --dataset model-runner/src/test/resources/byo/data/tokens.jsonl --steps 5
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tensorcache import TensorCacheClient  # noqa: E402
from tensorcache.pytorch import SessionDataset, ref_logps  # noqa: E402


def sequence_logps(model, rows, pad_id: int) -> torch.Tensor:
    """Per row, the sum of log-probs of the completion's tokens given the prompt (TRL's)."""
    seqs = [r["prompt"] + r["completion"] for r in rows]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    loss_mask = torch.zeros((len(rows), width), dtype=torch.bool)
    for i, (r, s) in enumerate(zip(rows, seqs)):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
        loss_mask[i, len(r["prompt"]) : len(s)] = True
    logits = model(ids, mask)[:, :-1, :]
    logps = torch.gather(F.log_softmax(logits.float(), dim=-1), 2, ids[:, 1:].unsqueeze(2)).squeeze(2)
    return (logps * loss_mask[:, 1:]).sum(dim=1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--endpoint", required=True, action="append", help="a node's lookup port, host:port")
    p.add_argument("--cache", required=True, help="the cache id the node prints")
    p.add_argument("--model-dir", required=True, type=Path)
    p.add_argument("--dataset", required=True, type=Path)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--global-batch", type=int, default=4)
    p.add_argument("--beta", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--run", default="dpo-loop")
    args = p.parse_args()

    rows = [json.loads(line) for line in args.dataset.read_text().splitlines() if line.strip()]
    meta = json.loads((args.model_dir / "tensorcache-model.json").read_text())
    policy = torch.jit.load(str(args.model_dir / "model.pt"))
    policy.train()
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    torch.manual_seed(0)

    with TensorCacheClient(args.endpoint, timeout=120) as client:
        session = client.session(args.cache, args.run, rank=0, world_size=1, seed=1,
                                 global_batch=args.global_batch)
        for batch in SessionDataset(session, steps=args.steps):
            picked = [rows[int(i)] for i in batch["indices"]]
            chosen = [{"prompt": r["prompt_ids"], "completion": r["chosen_ids"]} for r in picked]
            rejected = [{"prompt": r["prompt_ids"], "completion": r["rejected_ids"]} for r in picked]
            ref = ref_logps(client, args.cache, batch["indices"])
            assert torch.equal(ref["ref_chosen_logps"], batch["chosen_logp"])
            pc = sequence_logps(policy, chosen, meta["pad_token_id"])
            pr = sequence_logps(policy, rejected, meta["pad_token_id"])
            margin = (pc - ref["ref_chosen_logps"]) - (pr - ref["ref_rejected_logps"])
            loss = -F.logsigmoid(args.beta * margin).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"step {int(batch['step'])} epoch {int(batch['epoch'])} loss {loss.item():.6f}", flush=True)


if __name__ == "__main__":
    main()
