"""Tools that build the data files shipped in ``data/``: the precomputed vectors of a dataset
(``rag-lab data build-vectors``) and the world as a HotpotQA file (``rag-lab world export-hotpotqa``).
They sit at the top of the layers: they read datasets, chunk, index and embed."""
