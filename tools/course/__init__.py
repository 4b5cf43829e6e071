"""Course authoring: the executed notebooks as HTML (:mod:`.export`), the lesson map of ``notebooks/README.md``
(:mod:`.map`), README's quickstart block (:mod:`.readme_quickstart`), the marked blocks they rewrite
(:mod:`.marked_block`), and the rendered course site with its pytest plugin and MkDocs hook (:mod:`.site`).
Run from the repository root: ``python -m tools.course export|map``. The method: docs/course.md."""
