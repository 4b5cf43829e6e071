#!/usr/bin/env python
"""Write ``data/recorded/vectors/<model>.npz``: the vectors of every text a replay of the recorded real-model
sweeps (every sweep file whose backend has a cassette) embeds beyond what the datasets ship — the search queries and passages
the model wrote, which no dataset file holds. With it a replay from an empty cache never loads the embedding
model, and retrieves with the query vectors the recording machine computed, whatever the CPU.

It replays every recorded sweep offline into a scratch cache folder; what the cached embedder had to compute
there is exactly the missing set (the shipped vectors of ``data/recorded`` itself are left out while it runs,
so a rebuild starts from nothing). Same file format as a dataset's (:mod:`rag_lab.embedding.shipped`).

    source scripts/env.sh
    python scripts/build_recorded_vectors.py
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="recorded-vectors-"))
    os.environ["RAG_LAB_CACHE"] = str(scratch)      # before the package reads it: an empty embedding cache

    from rag_lab.embedding import DEFAULT_MODEL_ID, shipped
    from rag_lab.experiments import run_sweep
    from rag_lab.experiments.engine.sweep_file import load_sweep_spec, replay_spec
    from rag_lab.paths import DATA_DIR, SWEEPS_DIR

    target = shipped.vector_file(DATA_DIR / "recorded", DEFAULT_MODEL_ID)
    datasets = [p for p in sorted(DATA_DIR.iterdir()) if p.is_dir() and p.name != "recorded"]
    shipped.shipped_vectors.cache_clear()
    original = shipped.ShippedVectors.__init__

    def datasets_only(self, model_id, dataset_dirs=None):  # the datasets' own vectors, not the file being built
        original(self, model_id, datasets if dataset_dirs is None else dataset_dirs)

    shipped.ShippedVectors.__init__ = datasets_only
    start = time.perf_counter()
    for sweep in sorted(SWEEPS_DIR.glob("*.yaml")):
        if not (spec := load_sweep_spec(sweep)).backend.cassette:
            continue
        run_sweep(replay_spec(spec), scratch / "runs" / sweep.stem, progress="quiet")
        print(f"replayed {sweep.name}", file=sys.stderr)
    with sqlite3.connect(scratch / "embeddings.sqlite") as conn:
        rows = sorted(conn.execute("SELECT key, dim, vector FROM embeddings"))
    keys = np.array([key for key, _, _ in rows], dtype="S64")
    vectors = np.stack([np.frombuffer(blob, dtype=np.float32) for _, _, blob in rows])
    if any(dim != vectors.shape[1] for _, dim, _ in rows):
        raise SystemExit(f"mixed vector sizes in {scratch}: more than one model embedded")
    target.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(target, keys=keys, vectors=vectors)
    print(f"{target}: {len(keys)} texts the recorded model wrote, {target.stat().st_size / 1e3:.0f} kB, "
          f"{time.perf_counter() - start:.0f} s (scratch: {scratch})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
