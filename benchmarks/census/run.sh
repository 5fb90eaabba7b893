#!/bin/sh
# The census benchmark of benchmarks/README.md ("Census"): 50 transformers model types and 128 timm
# architectures (one per timm module, plus 30 common ones) on 2 workers: a local process pool, or a Dask
# LocalCluster. From the repository root, with the census extra installed:
#   XCVIZ_PY=/path/to/python sh benchmarks/census/run.sh [local|dask] [SOURCES...]
# --resume: a stopped run continues where it was; the wall time of each (re)start goes to the summary.
PY=${XCVIZ_PY:-python3}
HERE=benchmarks/census
EXECUTOR=${1:-local}
shift 2>/dev/null
SOURCES=${*:-"$(sed 's/^/hf:/' $HERE/hf_models.txt) $(sed 's/^/timm:/' $HERE/timm_models.txt)"}
START=$(date +%s)
nice $PY -m xcviz census $SOURCES -o $HERE/results_$EXECUTOR.jsonl --resume --executor $EXECUTOR --jobs 2 \
    --timeout 300 --top 30 > $HERE/summary_$EXECUTOR.txt 2>> $HERE/log_$EXECUTOR.txt
echo "exit $? wall $(( $(date +%s) - START )) s ($(date -u +%H:%M:%S) UTC)" >> $HERE/wall_$EXECUTOR.txt
