"""rag_lab: a Jupyter-native toolkit for studying bounded, controlled retrieval-augmented generation."""

from rag_lab.records import Chunk, Corpus, Dataset, Document, EvalSet, Question

__all__ = ["Chunk", "Corpus", "Dataset", "Document", "EvalSet", "Question"]
__version__ = "0.1.0"
