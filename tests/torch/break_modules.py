"""Small modules with the graph breaks users meet most (NumPy on a tensor, print, data-dependent control flow,
.item(), a data-dependent shape), for the hybrid backend's tests against torch eager."""
from __future__ import annotations

import sys

import numpy as np
import torch

nn = torch.nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)
        self.norm = nn.LayerNorm(16)


class NumpyOnTensor(Base):
    def forward(self, x):
        h = self.norm(torch.relu(self.fc1(x)))
        scale = np.tanh(h.detach().numpy()).mean(axis=-1, keepdims=True)  # Dynamo traces NumPy as torch
        return self.fc2(h * torch.from_numpy(scale) + 1)


class PrintCall(Base):
    def forward(self, x):
        h = self.norm(torch.relu(self.fc1(x)))
        print("break_modules: print is a graph break", file=sys.stderr)
        return torch.softmax(self.fc2(torch.tanh(h) * 2), -1)


class TensorBranch(Base):
    def forward(self, x):
        h = self.norm(torch.relu(self.fc1(x)))
        if x.sum() > 0:   # data-dependent control flow (call with x and -x for both branches)
            h = torch.sigmoid(h) * 3
        else:
            h = torch.tanh(h) - 1
        return self.fc2(h)


class ItemScalar(Base):
    def forward(self, x):
        h = self.norm(torch.relu(self.fc1(x)))
        s = h.abs().max().item()
        return self.fc2(h / (s + 1.0)).exp()


class MaskedSelect(Base):
    def forward(self, x):
        h = self.norm(torch.relu(self.fc1(x)))
        kept = h[h > 0.1]   # a data-dependent shape
        return self.fc2(nn.functional.gelu(h)) * kept.numel() + kept.sum()


class InPlace(Base):
    def forward(self, x):
        h = self.fc1(x)
        h += 1.0               # in-place on an intermediate: functionalized before clustering
        h.relu_()
        h[:, :4] = 0.0         # a write into a slice view
        return self.fc2(self.norm(h))


BREAKS = [NumpyOnTensor, PrintCall, TensorBranch, ItemScalar, MaskedSelect, InPlace]
