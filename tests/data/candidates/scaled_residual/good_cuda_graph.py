"""Correct on the GPU: the fused kernel captured once in a CUDA graph and replayed; inputs are
copied into static buffers and the output is cloned, so no result is reused between calls."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale_add(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))
        self._graph = None

    def _eager(self, x, y, out):
        n = x.numel()
        _relu_scale_add[(triton.cdiv(n, 4096),)](x, y, self.scale, out, n, x.shape[-1], BLOCK=4096)

    def forward(self, x, y):
        if not x.is_cuda:
            out = torch.empty_like(x)
            self._eager(x, y, out)
            return out
        if self._graph is None or self._static_x.shape != x.shape:
            self._static_x, self._static_y = x.clone(), y.clone()
            self._static_out = torch.empty_like(x)
            self._eager(self._static_x, self._static_y, self._static_out)  # compile first
            torch.cuda.synchronize()
            self._graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self._graph):
                self._eager(self._static_x, self._static_y, self._static_out)
        self._static_x.copy_(x)
        self._static_y.copy_(y)
        self._graph.replay()
        return self._static_out.clone()
