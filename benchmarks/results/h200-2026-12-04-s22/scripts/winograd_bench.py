"""Micro-benchmark (twenty-second session): KernelOPT's Winograd convolution (F(2x2, 3x3) and
F(2x2x2, 3x3x3)) against cuDNN, TF32 off, in NCHW/NCDHW and channels-last, with each form's
largest error against a float64 convolution: every 3x3 (3x3x3) stride-1 convolution of the
bench problems that the rule (kernels.own_winograd_sizes) takes, at full size, plus padding
0 and 2 forms of the first ones. One line per shape; JSON to argv[1]."""

import importlib.util
import json
import sys
from pathlib import Path

import torch
import torch.nn as nn

import kernelopt_jupyter.agents.rewrites.kernels as kernels
from kernelopt_jupyter.agents.rewrites.kernels import (
    kernelopt_winograd_convolution,
    own_winograd_sizes,
)

kernels.WINOGRAD_3D = True  # measured here although the planner no longer offers it
from kernelopt_jupyter.verify.timing import _Timer

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
ROOT = Path(__file__).resolve().parents[4]
shapes: dict[tuple, list[str]] = {}
for path in sorted((ROOT / "benchmarks/problems").glob("level*/*.py")):
    if path.name.startswith("_"):
        continue
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if not hasattr(mod, "Model"):
            continue
        with torch.device("cuda"):
            model = mod.Model(*mod.get_init_inputs())
            inputs = mod.get_inputs()
    except Exception as exc:  # noqa: BLE001
        print("skip", path.name, type(exc).__name__, exc)
        continue
    seen = []

    def hook(m, args, _out, seen=seen):
        if m.groups == 1 and m.stride == (1,) * len(m.stride) and m.dilation == (1,) * len(m.dilation):
            seen.append((tuple(args[0].shape), tuple(m.weight.shape), m.bias is not None, tuple(m.padding)))

    for m in model.modules():
        if isinstance(m, nn.Conv2d | nn.Conv3d) and m.kernel_size == (3,) * (m.weight.dim() - 2):
            m.register_forward_hook(hook)
    with torch.no_grad():
        model(*inputs)
    for key in seen:
        xs, ws, _, pad = key
        if own_winograd_sizes(xs, ws, (1,) * len(pad), pad, (1,) * len(pad), False, 1) is not None:
            shapes.setdefault(key, []).append(path.stem)
    del model, inputs
    torch.cuda.empty_cache()
# 3-D is already measured (call 1): skipped here.
shapes = {k: v for k, v in shapes.items() if len(k[0]) == 4}
# Padding 0 and 2 forms of the first two 2-D shapes (a "valid" nn.Conv2d(c, k, 3) is common).
for key in [k for k in shapes if len(k[0]) == 4][:2]:
    for pad in ((0, 0), (2, 2)):
        shapes.setdefault((key[0], key[1], key[2], pad), ["padding variant"])

timer = _Timer("cuda")


def median_ms(fn, args, rounds=15):
    for _ in range(3):
        timer.time(fn, args)
    samples = []
    for _ in range(rounds):
        timer.flush()
        samples.append(timer.time(fn, args)[0])
    samples.sort()
    return samples[len(samples) // 2]


rows = []
for (xs, ws, has_bias, pad), problems in shapes.items():
    dims = len(xs) - 2
    one = (1,) * dims
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(xs, device="cuda", generator=gen)
    w = torch.randn(ws, device="cuda", generator=gen) / (ws[1] * 3**dims) ** 0.5
    b = torch.randn(ws[0], device="cuda", generator=gen) if has_bias else None
    with torch.no_grad():
        ref64 = torch.convolution(x.double(), w.double(), None if b is None else b.double(), one, pad, one, False, (0,) * dims, 1)
        row = {"problems": problems, "input": xs, "weight": ws, "padding": pad}
        for layout in ("contiguous", "channels_last"):
            fmt = (torch.channels_last if dims == 2 else torch.channels_last_3d) if layout == "channels_last" else torch.contiguous_format
            xl, wl = x.to(memory_format=fmt), w.to(memory_format=fmt)
            args = [xl, wl, b, one, pad, one, False, (0,) * dims, 1]
            for name, fn in (("cudnn", torch.convolution), ("winograd", kernelopt_winograd_convolution)):
                out = fn(*args)
                row[f"{name}_{layout}_err"] = (out.double() - ref64).abs().max().item()
                row[f"{name}_{layout}_strides_match"] = None
                if name == "winograd":
                    row[f"{name}_{layout}_strides_match"] = out.stride() == torch.convolution(*args).stride()
                row[f"{name}_{layout}_ms"] = round(median_ms(fn, args), 4)
                del out
        del ref64
        rows.append(row)
        print(
            xs, ws, pad, problems,
            "cudnn c/cl %.3f/%.3f ms" % (row["cudnn_contiguous_ms"], row["cudnn_channels_last_ms"]),
            "winograd c/cl %.3f/%.3f ms" % (row["winograd_contiguous_ms"], row["winograd_channels_last_ms"]),
            "err ratio c/cl %.2f/%.2f" % (
                row["winograd_contiguous_err"] / max(row["cudnn_contiguous_err"], 1e-30),
                row["winograd_channels_last_err"] / max(row["cudnn_channels_last_err"], 1e-30)),
            "strides", row["winograd_contiguous_strides_match"], row["winograd_channels_last_strides_match"],
            flush=True,
        )
    torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(rows, indent=1))
