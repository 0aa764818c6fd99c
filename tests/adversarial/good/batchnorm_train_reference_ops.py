"""Training-mode BatchNorm1d on the vendor path: the reference's own module, dispatch-only.
As constructed (training), it normalises with the batch's statistics and updates the
running ones, as the reference does."""

import torch.nn as nn

KERNELOPT_DISPATCH_ONLY = True


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return self.bn(x)
