"""The synthetic world: a seeded fictional software company with an evaluation set."""

from rag_lab.world.generator import WorldConfig, generate_world, write_world

__all__ = ["WorldConfig", "generate_world", "write_world"]
