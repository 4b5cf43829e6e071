"""The bounded pipeline, its policies, per-question state and traces."""

from rag_lab.pipeline.answer import REFUSAL, Result
from rag_lab.pipeline.config import POLICIES, POLICY_CLASSES, PipelineConfig
from rag_lab.pipeline.finalize import ContextItem
from rag_lab.pipeline.interventions import Intervention
from rag_lab.pipeline.pipeline import Pipeline
from rag_lab.pipeline.policies import *  # noqa: F403  (the policy classes, policies.__all__)
from rag_lab.pipeline.policies import __all__ as _policy_names
from rag_lab.pipeline.repeated_query import RepeatedQueryStop  # registers its policy section and its stop rule
from rag_lab.pipeline.resources import CorpusResources
from rag_lab.pipeline.state import QuestionState
from rag_lab.pipeline.trace import StopReason, Trace, TraceStep

__all__ = [
    "POLICIES", "POLICY_CLASSES", "REFUSAL", "ContextItem", "CorpusResources", "Intervention", "Pipeline", "PipelineConfig",
    "QuestionState", "RepeatedQueryStop", "Result", "StopReason", "Trace", "TraceStep", *_policy_names,
]
