# Sourced by the scripts: offline model loading and a repo-local cache.
export HF_HUB_OFFLINE=1
export TRANSFORMERS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
export RAG_LAB_CACHE=${RAG_LAB_CACHE:-$PWD/.cache/rag_lab}
export PATH="$PWD/.venv/bin:$PATH"
