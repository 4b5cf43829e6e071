"""The LLM layer: backends, prompts, response schemas and the simulated model. Importing it completes the
LLM roles table with the built-in roles (:mod:`rag_lab.llm.builtin_roles`)."""

from rag_lab.llm import builtin_roles as _builtin_roles  # noqa: F401  (registers the built-in rows of LLM_ROLES)
