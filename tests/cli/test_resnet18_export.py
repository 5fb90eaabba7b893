"""Issue 30's paper cuts on a ResNet-18 as torch.onnx.export writes it (random weights, 44.6 MiB): the model
the issue was written against. Exported once per session with torch (skipped without it)."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch", reason="the ResNet-18 is exported with torch")
nn = torch.nn


class Block(nn.Module):
    def __init__(self, i: int, o: int, stride: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o)
        self.conv2, self.bn2 = nn.Conv2d(o, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o)
        self.relu = nn.ReLU()
        self.downsample = nn.Sequential(nn.Conv2d(i, o, 1, stride, bias=False), nn.BatchNorm2d(o)) \
            if stride != 1 or i != o else None

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """torchvision's resnet18, module for module (so the export's names are its: /fc/Gemm, /layer1/...)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
        self.relu, self.maxpool = nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for k, (i, o, s) in enumerate(widths, 1):
            setattr(self, f"layer{k}", nn.Sequential(Block(i, o, s), Block(o, o, 1)))
        self.avgpool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(512, 1000)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


@pytest.fixture(scope="module")
def resnet18(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("resnet") / "resnet18.onnx")
    torch.manual_seed(0)
    try:
        torch.onnx.export(ResNet18().eval(), (torch.randn(1, 3, 224, 224),), path, dynamo=False, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}}, do_constant_folding=False)
    except Exception as e:  # noqa: BLE001 - an exporter this torch lacks (onnx missing, ...) is a skip, said
        pytest.skip(f"torch.onnx.export failed here: {e.__class__.__name__}: {str(e)[:100]}")
    return path


def test_print_resnet18_starts_with_its_nodes(run_cli, resnet18):
    code, out, _ = run_cli("print", resnet18)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("# weights left out (") and "44.6 MiB" in lines[0]
    assert lines[1].startswith("graph ") and " = " in lines[2] and len(out) < 100_000   # (with --weights: ~99 MB)
    assert "# weight %fc.weight: f32[1000,512] (2.0 MiB)" in lines   # 512,000 f32


def test_resnet18_gate_entries_and_explain(run_cli, resnet18):
    code, summary, _ = run_cli("stats", resnet18, "--dim", "batch=1")
    assert "591.9 KiB cross boundaries (+ 44.6 MiB resident parameters)" in " ".join(summary.split())
    code, out, _ = run_cli("check", resnet18, "--dim", "batch=1", "--max-boundary-bytes", "1MiB")
    assert code == 0 and "activations crossing boundaries 591.9 KiB ≤ 1.0 MiB" in out
    code, out, _ = run_cli("cluster", resnet18, "--json")
    assert [c["entry_points"] for c in json.loads(out)["clusters"]] == [["/conv1/Conv"]]
    code, _, err = run_cli("explain", resnet18, "fc")
    assert code == 2 and "did you mean '/fc/Gemm'?" in err
    code, short, _ = run_cli("explain", resnet18, "/fc/Gemm")
    code, full, _ = run_cli("explain", resnet18, "/fc/Gemm", "--all")
    assert len(short.splitlines()) <= 12 < len(full.splitlines())
    assert "merged /Flatten -> /fc/Gemm" in short and "more merge lines hidden (--all shows every merge)" in short
