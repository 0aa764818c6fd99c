"""The offline policy spends its minute by the roofline: units are put in op families, moves on
the kernels furthest from their roofs go first, the experience memory remembers which move won
on which family, and the KernelBench dev record splits each level's gain over the kinds of move.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from test_offline_moves import CONV_BN

from kernelopt_jupyter.agents.base import KernelUnit
from kernelopt_jupyter.agents.op_families import (
    family_of_ops,
    graph_families,
    node_family,
    unit_family,
)
from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.graph import trace
from kernelopt_jupyter.agents.rewrites.task import scan

# ----------------------------------------------------------------------- profile fixtures
#: Units as the CPU dispatch map gives them (``kernelopt profile --json``'s records, trimmed).
FUSED_NORM = KernelUnit(
    "triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0",
    "triton",
    ops=["aten.gelu", "aten.native_layer_norm", "aten._softmax", "aten.mul", "aten.mean"],
)
WRITTEN_OUT_RMS = KernelUnit(
    "triton_per_fused_add_div_mean_pow_sqrt_0",
    "triton",
    ops=["aten.pow", "aten.mean", "aten.add", "aten.sqrt", "aten.div"],
)
ADDMM = KernelUnit(
    "vendor_0_addmm",
    "vendor",
    source="extern_kernels.addmm(arg2_1, arg0_1, reinterpret_tensor(arg1_1, (64, 48)))",
    ops=["aten.t", "aten.addmm"],
    library="cuBLAS",
)
CONV_T = KernelUnit(
    "vendor_0_convolution",
    "vendor",
    source="buf0 = extern_kernels.convolution(arg1_1, arg0_1, stride=(2, 2), padding=(1, 1), "
    "dilation=(1, 1), transposed=True, output_padding=(1, 1), groups=1, bias=None)",
    # A vendor unit lists the ops fused around it too: its own call says what it is.
    ops=["aten.relu", "aten.convolution"],
    library="cuDNN",
)
POOL_CALL = KernelUnit(
    "vendor_1_avg_pool3d",
    "vendor",
    source="torch.ops.aten.avg_pool3d.default(buf2, [3, 3, 3], [2, 2, 2])",
    ops=["aten.avg_pool3d"],
)


def test_profile_units_are_put_in_their_op_family() -> None:
    assert unit_family(FUSED_NORM) == "normalisation"  # a fused norm, softmax and GELU
    assert unit_family(WRITTEN_OUT_RMS) == "normalisation"  # mean, sqrt, div: a norm op by op
    assert unit_family(ADDMM) == "gemm"
    assert unit_family(CONV_T) == "conv-transpose"  # not the ReLU fused before it
    assert unit_family(POOL_CALL) == "pooling"
    plain_conv = KernelUnit("v", "vendor", source=CONV_T.source.replace("True", "False"),
                            ops=["aten.convolution"], library="cuDNN")  # fmt: skip
    assert unit_family(plain_conv) == "conv"
    assert family_of_ops(["aten.cumsum", "aten.mul"]) == "scan"
    assert family_of_ops(["aten.argmax"]) == "arg-reduction"
    assert family_of_ops(["aten.amax", "aten.sub", "aten.exp", "aten.sum", "aten.div"]) == "softmax"
    assert family_of_ops(["aten._log_softmax", "aten.nll_loss_forward"]) == "softmax"
    assert family_of_ops(["aten.nll_loss_forward"]) == "loss"
    assert family_of_ops(["aten.sum", "aten.mul"]) == "reduction"
    assert family_of_ops(["prims.convert_element_type", "aten.add"]) == "elementwise"
    assert family_of_ops(["aten.view", "aten.permute"]) is None  # data movement only
    # A Triton problem's own kernel has no ATen ops: its tl.* calls say what it does.
    triton = {
        "acc += tl.dot(a, b)": "gemm",
        "y = tl.cumsum(x, axis=0)": "scan",
        "i = tl.argmax(x, 0)": "arg-reduction",
        "m = tl.max(x, 0)\ne = tl.exp(x - m)\ny = e / tl.sum(e, 0)": "softmax",
        "s = tl.sum(x * x, 0)\ny = x * tl.rsqrt(s)": "normalisation",
        "tl.store(o, tl.load(p) * 2)": "elementwise",
    }
    for body, family in triton.items():
        assert unit_family(KernelUnit("k", "triton", source=body)) == family, body


class _Graph(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose3d(3, 4, 3, stride=2)
        self.norm = nn.GroupNorm(2, 4)
        self.pool = nn.MaxPool3d(2)
        self.proj = nn.Linear(4, 6)

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        y = self.pool(self.norm(self.up(x))).mean((2, 3, 4))
        z = torch.softmax(self.proj(y) @ torch.ones(6, 6), dim=-1).cumsum(1)
        return z.argmin(1).float().sum() + F.mse_loss(z, target) + F.conv1d(z[:, None], z[:1, None])


def test_graph_nodes_are_put_in_their_op_family() -> None:
    gm = trace(_Graph(), [torch.randn(2, 3, 4, 4, 4), torch.randn(2, 6)])
    by_node = {str(n.target): node_family(gm, n) for n in gm.graph.nodes}
    assert by_node["up"] == "conv-transpose" and by_node["norm"] == "normalisation"
    assert by_node["pool"] == "pooling" and by_node["proj"] == "gemm"
    # In the canonical spelling the rules match (the pool layer a functional call) alike.
    canonicalize(gm)
    counts = graph_families(gm)
    for family in ("gemm", "pooling", "softmax", "scan", "arg-reduction", "reduction", "loss"):
        assert counts[family] >= 1, (family, counts)
    assert counts["conv"] == 1 and counts["conv-transpose"] == 1
    assert None not in counts


def test_a_rewrite_targets_the_families_it_took_nodes_from() -> None:
    found = scan(CONV_BN, "<test>")
    fold = next(m for m in found.matches if m.names == ["fold_batchnorm"])
    assert fold.families == ["normalisation"]  # the BatchNorm goes; the conv stays a conv
