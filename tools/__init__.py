"""The project's own tooling, outside the importable library: what builds the course (``tools.course``). A
researcher using rag_lab never imports it; the tests, ``scripts/`` and ``mkdocs.yml`` do, from the repository root."""
