"""Demo Triton problem: a user's row softmax kernel launched with a deliberately naive config."""

import torch
import triton
import triton.language as tl

KERNELOPT_ENTRY = "row_softmax"
ROWS = 256
COLS = 397  # not a power of two: the masks on every load and store matter


@triton.jit
def _softmax_row_kernel(
    out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


def row_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor, one program per row."""
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    # Deliberately naive launch: one warp and no pipelining whatever the row width, so the
    # optimizer has a launch configuration to improve before touching the kernel body.
    _softmax_row_kernel[(n_rows,)](
        out,
        x,
        x.stride(0),
        out.stride(0),
        n_cols,
        BLOCK=triton.next_power_of_2(n_cols),
        num_warps=1,
        num_stages=1,
    )
    return out


def get_inputs() -> list[torch.Tensor]:
    # A wide range of values: a kernel that forgets to subtract the row max overflows exp.
    return [torch.randn(ROWS, COLS) * 10.0]


def reference(x: torch.Tensor) -> torch.Tensor:
    """The torch-only referee (run in float64 by the verifier)."""
    return torch.softmax(x, dim=-1)
