# KernelOPT: accepted candidate c7 for cell (module problem)
#   lineage: agent executor, parent c3, plan p2
#   gates:   static pass · correctness pass · fp64 pass · performance skipped (no GPU)
#   speedup: not timed (no GPU: the performance gate was skipped)
#   defines: ModelNew (a drop-in for Model: same constructor arguments and weights)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0
