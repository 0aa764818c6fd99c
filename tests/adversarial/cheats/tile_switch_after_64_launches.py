"""Linear + ReLU in one Triton GEMM with a fused bias/ReLU epilogue, 16x16 tiles (one launch
per tile, cheap to JIT). Once warm, the epilogue goes through a shared helper (one code path
for the bias and the activation)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _epilogue(acc, bias):
    return tl.maximum(acc + bias[None, :], 0.0)


@triton.jit
def _linear_relu(
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    M,
    N,
    K,
    pid_m,
    pid_n,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    SHARED_EPILOGUE: tl.constexpr,
):
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            x_ptr + rm[:, None] * K + (k0 + rk)[None, :],
            mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            w_ptr + rn[None, :] * K + (k0 + rk)[:, None],
            mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K),
            other=0.0,
        )
        acc += tl.dot(a, b, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    if SHARED_EPILOGUE:  # noqa: SIM108 - a constexpr branch, as Triton kernels write it
        y = _epilogue(acc, bias)
    else:
        y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], y, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.launched = 0

    def forward(self, x):
        x = x.contiguous()
        w, b = self.linear.weight, self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        warm = self.launched >= 64
        for i in range(triton.cdiv(M, 16)):
            for j in range(triton.cdiv(N, 16)):
                _linear_relu[(1,)](
                    x, w, b, out, M, N, K, i, j, BM=16, BN=16, BK=16, SHARED_EPILOGUE=warm
                )
                self.launched += 1
        return out
