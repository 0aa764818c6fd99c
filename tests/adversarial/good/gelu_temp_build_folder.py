"""Exact GELU with tl.math.erf. Like Triton's own launcher build on the GPU, the module
writes a small file in a temporary folder at import, reads it back and removes the folder
(shutil.rmtree removes through folder descriptors): work in its own temporary folder is
allowed."""

import os
import shutil
import tempfile

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _block_from_scratch() -> int:
    folder = tempfile.mkdtemp(prefix="gelu-build-")
    try:
        os.mkdir(os.path.join(folder, "sub"))
        path = os.path.join(folder, "sub", "block.txt")
        with open(path, "w") as f:
            f.write("1024")
        with open(path) as f:
            return int(f.read())
    finally:
        shutil.rmtree(folder)


_BLOCK = _block_from_scratch()


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    cdf = 0.5 * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, (x * cdf).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _gelu[(triton.cdiv(n, _BLOCK),)](x, out, n, BLOCK=_BLOCK)
        return out
