#!/usr/bin/env bash
# Make requirements.lock from constraints.txt: the same exact versions, each with the sha256 of every file PyPI
# serves for it (uv pip compile --generate-hashes), plus the build requirements pip needs to build xcviz itself.
# tools/lock.sh runs it after writing constraints.txt; run it alone after editing constraints.txt by hand.
#
# Why two files: pip reads a --hash in a constraints file as "hash-checking mode for everything", which then
# refuses `pip install -e .` (the project itself has no hash). So the README and CI keep installing with
# `-c constraints.txt` (exact versions, no hashes), and requirements.lock is the verified install:
#   pip install --require-hashes -r requirements.lock
#   pip install --no-deps --no-build-isolation -e .
# --no-deps: every dependency is in the lock (uv resolves none: the versions are constraints.txt's).
set -euo pipefail
cd "$(dirname "$0")/.."
uv="${UV:-uv}"
command -v "$uv" >/dev/null || { echo "tools/lock_hashes.sh needs uv (pip install uv), or UV=/path/to/uv" >&2; exit 2; }
build="$(mktemp)"
trap 'rm -f "$build"' EXIT
# the [build-system] requires of pyproject.toml (--no-build-isolation builds with these), at today's versions
python3 - "$build" <<'EOF'
import sys, tomllib
with open("pyproject.toml", "rb") as f:
    reqs = tomllib.load(f)["build-system"]["requires"]
pinned = {line.split("==")[0].lower() for line in open("constraints.txt") if "==" in line}
with open(sys.argv[1], "w") as out:
    out.writelines(r + "\n" for r in reqs if r.split(">")[0].split("<")[0].split("=")[0].strip().lower() not in pinned)
EOF
"$uv" pip compile --quiet --no-deps --generate-hashes --python-version 3.11 --no-header --no-annotate \
  constraints.txt "$build" -o requirements.lock.new
{
  echo "# constraints.txt's exact versions with their files' sha256 (tools/lock_hashes.sh), and the build requirements."
  echo "# A verified install: pip install --require-hashes -r requirements.lock && pip install --no-deps --no-build-isolation -e ."
  echo "# Entries a reviewer may not expect (each pulled by a dependency, not by xcviz):"
  echo "#   lazy-importer        importlib_metadata (Python < 3.15), which dask needs on Python < 3.12 (census extra)"
  echo "#   httpx2, httpcore2,   huggingface_hub 2.x's HTTP client (transformers, census extra); truststore: httpx2's and"
  echo "#   truststore           httpcore2's use of the system certificate store"
  echo "#   annotated-doc        typer (core)"
  echo "#   graphviz-pure        xcviz itself (core): the layout program where no system dot is installed"
  echo "#   ipython, jedi, ...   ai-edge-model-explorer (me extra) requires ipython, flask, portpicker, termcolor, watchdog"
  echo "#   torch                PyPI's files (the CPU wheel from download.pytorch.org/whl/cpu has other hashes: install"
  echo "#                        torch from there first, then this lock without it, or add that index's hashes)"
  sed -e '/^#/d' requirements.lock.new
} > requirements.lock
rm -f requirements.lock.new
