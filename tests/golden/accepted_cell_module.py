# KernelOPT: accepted candidate c7 for cell (module problem)
#   lineage: agent executor, parent c3, plan p2
#   gates:   static pass · correctness pass · fp64 pass · performance skipped (no GPU)
#   speedup: not timed (no GPU: the performance gate was skipped)
#   defines: ModelNew (a drop-in for Model: same constructor arguments and weights) and kernelopt_guarded(Model(...)): ModelNew's kernels where verified, Model elsewhere
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


# ----------------------------------------------------------------------
# KernelOPT guard: the kernels above run only for the verified shapes, dtypes and
# device (cpu), in eval mode without autograd; any other call runs
# the reference. Use: model = kernelopt_guarded(Model(...)); model(x);
# model.kernelopt_path says which path the last call took.
# Verified shape sets: as given.
# ----------------------------------------------------------------------

from kernelopt_jupyter.deploy.guard_runtime import kernelopt_guard


KERNELOPT_VERIFIED = {'device': 'cpu',
 'signatures': [[{'kind': 'tensor',
                  'shape': [1024, 256],
                  'dtype': 'torch.float32',
                  'contiguous': True}]],
 'shapes': ['as given'],
 'state_dtypes': [],
 'training': True}
KERNELOPT_INIT = []


def kernelopt_guarded(reference, *init):
    """The reference (a module instance or the problem's function) with the verified
    kernels swapped in where the guard admits the call (the verified set above)."""
    args = list(init) if init else KERNELOPT_INIT
    return kernelopt_guard(reference, ModelNew, KERNELOPT_VERIFIED, args)

# model = kernelopt_guarded(Model(*get_init_inputs()))  # your instance
