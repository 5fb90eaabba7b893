"""Build a UNet as users export them: torch.onnx.export (TorchScript exporter) of a four-level UNet with random
weights: Conv-BN-ReLU pairs, MaxPool down, bilinear Upsample (Resize) up, Concat skips, at 1x3xSxS.

    python tools/make_unet_onnx.py [--width 8] [--size 96] [--out tests/data/exports/unet_bilinear.onnx]

Writes the model and, beside it, NAME.inputs.npz (a seeded image) for `validate --inputs`. Issue 36 item 7
looked at why a UNet was estimated 1.00x against 0.71x measured; this is the model it was checked on."""
from __future__ import annotations

import argparse
import os

import numpy as np


def build(width: int):
    import torch
    from torch import nn
    import torch.nn.functional as F

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self, cin=3, classes=2, c=width):
            super().__init__()
            w = [c, 2 * c, 4 * c, 8 * c, 16 * c]
            self.down = nn.ModuleList([block(cin, w[0])] + [block(w[i], w[i + 1]) for i in range(4)])
            self.up = nn.ModuleList([block(w[i + 1] + w[i], w[i]) for i in reversed(range(4))])
            self.head = nn.Conv2d(w[0], classes, 1)

        def forward(self, x):
            skips = []
            for k, d in enumerate(self.down):
                x = d(x if k == 0 else F.max_pool2d(x, 2))
                skips.append(x)
            skips.pop()
            for u in self.up:
                x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
                x = u(torch.cat([x, skips.pop()], 1))
            return self.head(x)

    torch.manual_seed(0)
    model = UNet().eval()
    with torch.no_grad():   # BatchNorm statistics that are not the identity
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--out", default=os.path.join("tests", "data", "exports", "unet_bilinear.onnx"))
    a = ap.parse_args()
    import torch

    model = build(a.width)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, a.size, a.size)).astype(np.float32))
    torch.onnx.export(model, (x,), a.out, dynamo=False, input_names=["image"], output_names=["mask"])
    np.savez(a.out.replace(".onnx", ".inputs.npz"), image=x.numpy())
    print(a.out, os.path.getsize(a.out), "bytes")


if __name__ == "__main__":
    main()
