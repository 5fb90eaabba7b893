#!/bin/sh
# The census benchmark of benchmarks/README.md ("Census"): 50 transformers model types and 128 timm
# architectures (one per timm module, plus 30 common ones), on a local pool of 2 workers, then the same on
# a Dask LocalCluster of 2 workers. Run from the repository root with the census extra installed:
#   XCVIZ_PY=/path/to/python sh benchmarks/census/run.sh [local|dask]
set -e
PY=${XCVIZ_PY:-python3}
HERE=benchmarks/census
EXECUTOR=${1:-local}
SOURCES="$(sed 's/^/hf:/' $HERE/hf_models.txt) $(sed 's/^/timm:/' $HERE/timm_models.txt)"
START=$(date +%s)
# --resume: a stopped run continues where it was
nice $PY -m xcviz census $SOURCES -o $HERE/results_$EXECUTOR.jsonl --resume --executor $EXECUTOR --jobs 2 \
    --timeout 300 --report $HERE/census_$EXECUTOR.html --top 30 > $HERE/summary_$EXECUTOR.txt 2> $HERE/log_$EXECUTOR.txt
echo "wall $(( $(date +%s) - START )) s" >> $HERE/summary_$EXECUTOR.txt
