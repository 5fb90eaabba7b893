#!/usr/bin/env bash
# Issue 17: the size and time of `pip install xcviz` (no JAX) and of adding the [jax] extra, and `xcviz --help`'s
# time, in a fresh venv. Usage: bash benchmarks/light_install.sh [VENV_DIR] (default /tmp/xcviz-light-venv).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-/tmp/xcviz-light-venv}"
rm -rf "$venv" && python3 -m venv "$venv"
site() { du -sm "$venv"/lib/python3*/site-packages | cut -f1; }
now() { date +%s.%N; }
s=$(now); "$venv/bin/pip" install -q "$repo" >/dev/null; e=$(now)
echo "light install: $(echo "$e - $s" | bc) s, $(site) MB site-packages"
for i in 1 2 3; do s=$(now); "$venv/bin/xcviz" --help >/dev/null; e=$(now); echo "xcviz --help: $(echo "$e - $s" | bc) s"; done
"$venv/bin/xcviz" cluster "$repo/graphs/seed_demo.yaml" --min-cluster-size 1 | tail -1
"$venv/bin/xcviz" validate "$repo/graphs/seed_demo.yaml" || true   # one line naming the [jax] extra
s=$(now); "$venv/bin/pip" install -q "$repo[jax]" >/dev/null; e=$(now)
echo "adding [jax]: $(echo "$e - $s" | bc) s, $(site) MB site-packages"
