"""Time KernelOPT's depthwise kernel against cuDNN (eager) on the depthwise convolutions of the
bench problems, over block sizes and warps (nineteenth session, one H200). fp32, TF32 off."""

import torch
import torch.nn.functional as F
import triton

from kernelopt_jupyter.agents.rewrites import kernels as K

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


def bench(fn, reps=50):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


cases = {  # (n, c, h, w, m, k, stride, padding)
    "level1 depthwise_conv_multiplier2": (32, 192, 56, 56, 2, 3, 1, 1),
    "level2 depthwise_pointwise_conv (dw)": (32, 128, 112, 112, 1, 3, 2, 1),
    "level3 inverted_residual_stage (dw)": (32, 384, 28, 28, 1, 3, 1, 1),
}
for name, (n, c, h, w, m, k, s, p) in cases.items():
    x = torch.randn(n, c, h, w, device="cuda")
    wt = torch.randn(c * m, 1, k, k, device="cuda")
    b = torch.randn(c * m, device="cuda")
    ref = F.conv2d(x, wt, b, s, p, 1, c)
    got = K.kernelopt_depthwise_conv2d(x, wt, b, (s, s), (p, p), (1, 1))
    err = (got - ref).abs().max().item()
    moved = (x.numel() + ref.numel()) * 4
    cudnn = bench(lambda: F.conv2d(x, wt, b, s, p, 1, c))
    ours = bench(lambda: K.kernelopt_depthwise_conv2d(x, wt, b, (s, s), (p, p), (1, 1)))
    print(f"{name}: max err {err:.2e}; cuDNN {cudnn:.4f} ms, ours {ours:.4f} ms "
          f"({cudnn / ours:.2f}x); roofline {moved / 4.3e12 * 1e3:.4f} ms")
    h_out, w_out = ref.shape[2], ref.shape[3]
    best = None
    for block in (128, 256, 512, 1024, 2048):
        for warps in (2, 4, 8):
            grid = (n * c, triton.cdiv(h_out * w_out, block))
            out = torch.empty_like(ref)

            def run():
                K._kernelopt_depthwise_conv2d_kernel[grid](
                    x, wt, b, out, c, h, w, h_out, w_out, m, SH=s, SW=s, PH=p, PW=p, DH=1,
                    DW=1, KH=k, KW=k, HAS_BIAS=True, MB=triton.next_power_of_2(m),
                    BLOCK=block, num_warps=warps,
                )

            t = bench(run, 20)
            if best is None or t < best[0]:
                best = (t, block, warps)
    print(f"   best launch: {best[0]:.4f} ms at BLOCK {best[1]}, num_warps {best[2]}")
