#!/usr/bin/env bash
# Regenerate constraints.txt (and requirements.lock, the same with hashes: tools/lock_hashes.sh), the lock the README's install commands and CI use: every extra installed into a
# fresh virtual environment from the package registries, then frozen. Run it when pyproject.toml's
# dependencies change, and commit the result together with a full test run on it (bash .ci/run).
# timm (census extra) is pinned without its torchvision: PyPI's torchvision wheels are built against CUDA torch
# and do not import beside the CPU build the torch extra pins; the census tests need transformers and dask only.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q -e '.[dev,browser,me,torch]' transformers 'dask[distributed]'
"$venv/bin/pip" install -q --no-deps timm
{
  echo "# The tested versions of every dependency and extra: pip install -e '.[dev]' -c constraints.txt"
  echo "# Made by tools/lock.sh on $(date -u +%Y-%m-%d) (Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'))."
  "$venv/bin/pip" freeze --exclude-editable | sed -E 's/^(torch==[0-9.]+)\+cpu$/\1/'
} > constraints.txt
# the same versions with their files' hashes, for a verified install (see the script for why a second file)
bash tools/lock_hashes.sh
