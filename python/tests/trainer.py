"""A trainer process for the tests: takes steps of a session, logs them, and checkpoints after each.

usage: trainer.py ENDPOINTS CACHE RUN STEPS LOG CHECKPOINT
Each step appends "step epoch indices-digest values-digest" to LOG, then writes step + 1 to
CHECKPOINT (atomically); a restart resumes the session at the checkpoint's step.
"""

import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tensorcache import TensorCacheClient  # noqa: E402


def digest(a) -> str:
    return hashlib.sha256(a.tobytes()).hexdigest()[:16]


def main() -> None:
    endpoints, cache, run, steps, log, checkpoint = sys.argv[1:7]
    ckpt = Path(checkpoint)
    start = int(ckpt.read_text()) if ckpt.exists() else 0
    with TensorCacheClient(endpoints.split(","), timeout=120) as client:
        session = client.session(cache, run, rank=1, world_size=2, seed=11, global_batch=64)
        session.resume_from(start)
        with open(log, "a") as out:
            for s in session:
                if s.step >= int(steps):
                    break
                values = "".join(digest(s.values[k]) for k in sorted(s.values))
                out.write(f"{s.step} {s.epoch} {digest(s.indices)} {values}\n")
                out.flush()
                tmp = ckpt.with_suffix(".tmp")
                tmp.write_text(str(s.step + 1))
                os.replace(tmp, ckpt)


if __name__ == "__main__":
    main()
