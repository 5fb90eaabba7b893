#!/usr/bin/env bash
# Issue 27: the wheel against a source build. Sizes of the wheel (zipped, installed, its modules stripped or
# not), `pip install --no-deps` from the wheel and from the sdist (3 runs each, pip's cache warm), and the
# first `xcviz stats --json` after a fresh install from the wheel against the second (3 pairs), with the load
# average (`uptime`) before each. Usage, after `bash tools/build_wheel.sh OUT`:
#   bash benchmarks/wheel_install.sh OUT [GRAPH]   (GRAPH default: the typed 10^6-node graph, made once in OUT)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(cd "$1" && pwd)"
whl="$(ls "$out"/wheelhouse/xcviz-*.whl)"
sdist="$(ls "$out"/xcviz-*.tar.gz)"
graph="${2:-$out/typed_1000000.json}"
if [ ! -f "$graph" ]; then
  python3 -c "import sys; sys.path.insert(0, '$repo/benchmarks'); import ratios; ratios.graph_file(1000000, '$out')" >/dev/null
fi
load() { uptime | sed 's/.*load average: //; s/,.*//'; }

venv="$out/bench-venv"
rm -rf "$venv" && python3 -m venv "$venv"
pip="$venv/bin/pip"
"$pip" install -q --only-binary :all: -c "$repo/constraints.txt" "$whl"   # the dependencies, from the lock
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"

echo "wheel: $(basename "$whl"), $(du -b "$whl" | cut -f1) bytes zipped; sdist $(du -b "$sdist" | cut -f1) bytes"
echo "installed (xcviz/ with pip's .pyc): $(du -sk "$site/xcviz" | cut -f1) KB"
sos=$(mktemp -d) && (cd "$sos" && python3 -m zipfile -e "$whl" . && find . -name '*.so' -print0 | du -cb --files0-from=- | tail -1 | cut -f1 | sed 's/^/compiled modules: /; s/$/ bytes as built/' \
  && find . -name '*.so' -exec strip --strip-unneeded {} \; && find . -name '*.so' -print0 | du -cb --files0-from=- | tail -1 | cut -f1 | sed 's/^/compiled modules: /; s/$/ bytes stripped/'); rm -rf "$sos"

for src in "$whl" "$sdist"; do
  for i in 1 2 3; do
    "$pip" uninstall -q -y xcviz
    l=$(load)
    /usr/bin/time -f "%e s wall, %U+%S s CPU" -o "$out/time.txt" "$pip" install -q --no-deps "$src"
    echo "install --no-deps $(basename "$src"): $(cat "$out/time.txt") (load $l)"
  done
done

for i in 1 2 3; do
  "$pip" uninstall -q -y xcviz && "$pip" install -q --no-deps "$whl"
  for run in first second; do
    l=$(load)
    /usr/bin/time -f "%e s wall, %U+%S s CPU, %M KB peak RSS" -o "$out/time.txt" "$venv/bin/xcviz" stats "$graph" --json >"$out/stats_$run.json"
    echo "stats --json $(basename "$graph"), $run run after the install: $(cat "$out/time.txt") (load $l)"
  done
  cmp -s "$out/stats_first.json" "$out/stats_second.json" && echo "  outputs byte-identical"
done
