"""The packaged MiniLM on ONNX Runtime (:class:`OnnxEmbedder`): the sentence-transformers pipeline with the transformer
exported once by ``torch.onnx`` into ``$RAG_LAB_CACHE/onnx/<digest>/`` (``quantize=True``: its dynamic int8
quantization). The export, its cache, why not sentence-transformers' own ONNX backend and what it measures:
docs/benchmarks.md."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab.embedding.base import model_folder, normalize_rows
from rag_lab.errors import ConfigError
from rag_lab.paths import cache_dir

#: Bumped when the export below changes (it is part of the cache digest).
EXPORT_VERSION = 2
OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_EXPORT_LOCK = threading.RLock()  # re-entered: the int8 export first makes the fp32 one


def _require_onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise ConfigError("the ONNX embedder needs onnxruntime: pip install -e '.[onnx]'") from None
    return onnxruntime


def model_digest(model_path: Path) -> str:
    """A short digest of the model folder's files (names, sizes, and the content of small ones),
    the export settings and torch's version: the name of the exports' cache folder."""
    import torch

    h = hashlib.sha256(f"v{EXPORT_VERSION} opset{OPSET} torch{torch.__version__}".encode())
    for file in sorted(p for p in model_path.rglob("*") if p.is_file()):
        h.update(f"{file.relative_to(model_path)}:{file.stat().st_size}".encode())
        if file.stat().st_size < 1 << 20:
            h.update(file.read_bytes())
    return h.hexdigest()[:16]


def _export(model_path: Path, target: Path) -> None:
    """Export the transformer of the sentence-transformers folder to ONNX at ``target`` (atomically)."""
    import torch
    from sentence_transformers import SentenceTransformer

    from rag_lab.embedding.sentence_transformer import no_loading_bars

    with no_loading_bars():
        model = SentenceTransformer(str(model_path), device="cpu")
    transformer = model[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = model.tokenizer(["an example sentence", "and another, longer one"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        path = Path(tmp) / target.name
        with torch.no_grad():
            torch.onnx.export(LastHiddenState(), tuple(sample[name] for name in _INPUTS), str(path),
                              input_names=list(_INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
                              opset_version=OPSET, dynamo=False)
        os.replace(path, target)


def _quantize(source: Path, target: Path) -> None:
    """Dynamic int8 quantization of ``source`` into ``target`` (atomically)."""
    _require_onnxruntime()
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise ConfigError("int8 quantization needs the onnx package: pip install -e '.[onnx]'") from None
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        path = Path(tmp) / target.name
        quantize_dynamic(str(source), str(path), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(path, target)


def exported_model(model_path: Path, quantize: bool = False, root: Path | None = None) -> Path:
    """The cached ONNX file of ``model_path`` (exported, and quantized, on first use)."""
    folder = (root or cache_dir() / "onnx") / model_digest(model_path)
    target = folder / ("model_int8.onnx" if quantize else "model.onnx")
    with _EXPORT_LOCK:
        if not target.is_file():
            if quantize:
                folder.mkdir(parents=True, exist_ok=True)
                _quantize(exported_model(model_path, False, root), target)
            else:
                _export(model_path, target)
    return target


@lru_cache(maxsize=4)
def _session(path: str, threads: int) -> Any:
    ort = _require_onnxruntime()
    options = ort.SessionOptions()
    if threads > 0:
        options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=4)
def _tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def _read_settings(model_path: Path) -> int:
    """The folder's ``max_seq_length``; refuses pipelines other than Transformer → mean Pooling (→ Normalize)."""
    modules = json.loads((model_path / "modules.json").read_text(encoding="utf-8"))
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        raise ConfigError(f"the ONNX embedder runs Transformer → Pooling (→ Normalize) models; {model_path} has {kinds}")
    pooling = json.loads((model_path / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
    if not pooling.get("pooling_mode_mean_tokens") or any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
    ):
        raise ConfigError(f"the ONNX embedder implements mean pooling only; {model_path} asks for {pooling}")
    config = json.loads((model_path / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config.get("max_seq_length", 256))


class OnnxEmbedder:
    """A sentence-transformers folder (the packaged all-MiniLM-L6-v2 by default) run by ONNX Runtime.

    ``quantize`` uses the int8 export. ``threads``: ONNX Runtime's intra-op threads (0 = its default,
    one per physical core). Texts are embedded in batches of ``batch_size`` after sorting by length,
    so each batch pads to similar lengths (what sentence-transformers does too). ``model_id`` names
    the backend (``…#onnx`` or ``…#onnx-int8``) so cached vectors never mix with PyTorch's."""

    def __init__(self, model_path: str | Path | None = None, quantize: bool = False, batch_size: int = 64,
                 threads: int = 0, cache_root: str | Path | None = None) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if threads < 0:
            raise ConfigError(f"threads must be >= 0, got {threads}")
        _require_onnxruntime()
        self._path, base = model_folder(model_path)
        self.quantize = quantize
        self.backend = "onnx-int8" if quantize else "onnx"
        self.model_id = f"{base}#{self.backend}"
        self.batch_size = batch_size
        self.threads = threads
        self.max_seq_length = _read_settings(self._path)
        self._cache_root = Path(cache_root) if cache_root is not None else None
        self._onnx_path: Path | None = None
        self._dim: int | None = None

    @property
    def onnx_path(self) -> Path:
        """The ONNX file (exported on first access)."""
        if self._onnx_path is None:
            self._onnx_path = exported_model(self._path, self.quantize, self._cache_root)
        return self._onnx_path

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = _session(str(self.onnx_path), self.threads)
        tokenizer = _tokenizer(str(self._path))
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            enc = tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                            max_length=self.max_seq_length, return_tensors="np")
            feed = {name: np.asarray(enc[name], dtype=np.int64) for name in _INPUTS}
            hidden = session.run(None, feed)[0]
            mask = feed["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            if out.shape[1] == 0:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[rows] = pooled
        self._dim = out.shape[1]
        return normalize_rows(out)

    def __repr__(self) -> str:
        return f"OnnxEmbedder(model_id={self.model_id!r}, threads={self.threads})"
