"""Goldens for the cost rows of `xcviz stats` (D split into activations and resident parameters, hand-offs,
predicted kernels, coverage bounds)."""
from pathlib import Path

import pytest
from rich.console import Console

from tests.support.goldens import check_golden
from xcviz.pipeline import AnalysisOptions, analyse
from xcviz.render.tables import stats_table
from tests.support.paths import ROOT

ROOT = Path(ROOT)
CASES = {"resnet_block.h100": ("graphs/resnet_block.yaml", dict(device="gpu", hardware="h100")),
         "resnet_mini.cpu": ("graphs/resnet_mini.onnx", dict(dims={"N": 1})),
         "transformer_block.cpu": ("graphs/transformer_block.yaml", {}),
         "seed_demo.cpu": ("graphs/seed_demo.yaml", dict(min_cluster_size=1))}  # a custom op of unknown cost


@pytest.mark.parametrize("case", sorted(CASES))
def test_stats_table_golden(case):
    path, opts = CASES[case]
    a = analyse(str(ROOT / path), AnalysisOptions(**opts))
    console = Console(width=100, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(stats_table(a.graph, a.clustering, a.stats))
    check_golden(str(ROOT / "tests/golden/stats" / f"{case}.txt"), console.export_text(), __file__)
