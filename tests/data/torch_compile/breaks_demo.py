"""A small model with two graph breaks (a Python branch on .item(), then print), for `xcviz compile-report`."""
import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x)) * torch.sigmoid(x.sum(-1, keepdim=True))
        if h.mean().item() > 0:
            h = h - h.mean(-1, keepdim=True)
        print("gate open")
        return torch.softmax(self.fc2(torch.tanh(h)), dim=-1)


def make():
    torch.manual_seed(0)
    return Gate().eval(), (torch.randn(4, 16),)
