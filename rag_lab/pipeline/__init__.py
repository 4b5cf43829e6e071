"""The bounded pipeline, its policies, per-question state and traces."""

from rag_lab.pipeline.config import PipelineConfig
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.pipeline import REFUSAL, ContextItem, Pipeline, Result
from rag_lab.pipeline.policies import (
    CRAG,
    POLICY_CLASSES,
    BudgetDisclosure,
    CitationGuard,
    ControllerValidation,
    EchoGuard,
    Finalize,
    HyDE,
    JudgeInput,
    Policy,
    QueryRewrite,
    Retrieval,
    RoundCap,
    Router,
    SearchBudget,
    SourceContract,
    Truncation,
    ZeroYieldStop,
)
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.pipeline.state import QuestionState
from rag_lab.pipeline.trace import StopReason, Trace, TraceStep

__all__ = [
    "CRAG", "POLICY_CLASSES", "BudgetDisclosure", "CitationGuard", "ContextItem", "ControllerValidation", "CorpusResources",
    "EchoGuard",
    "Finalize",
    "HyDE", "Intervention", "JudgeInput", "Pipeline", "PipelineConfig", "Policy", "QueryRewrite", "QuestionState", "REFUSAL",
    "Result", "Retrieval", "RoundCap", "Router", "SearchBudget", "SourceContract", "StopReason", "Trace",
    "TraceStep", "Truncation", "ZeroYieldStop",
]
