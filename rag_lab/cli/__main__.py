"""``python -m rag_lab.cli``: the ``rag-lab`` command."""

import sys

from rag_lab.cli import main

sys.exit(main())
