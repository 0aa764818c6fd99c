# KernelOPT: accepted candidate c7 for cell (module problem)
#   lineage: agent executor, parent c3, plan p2
#   gates:   static pass · correctness pass · fp64 pass · performance skipped (no GPU)
#   speedup: not timed (no GPU: the performance gate was skipped)
#   defines: ModelNew (a drop-in for Model: same constructor arguments and weights) and kernelopt_guarded(Model(...)): ModelNew's kernels where verified, Model elsewhere
from kernelopt_jupyter.notebook.interpreter import use_cpu_interpreter

use_cpu_interpreter()  # no GPU: the Triton kernels below run in Triton's interpreter

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        _relu_scale[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
        return y


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
