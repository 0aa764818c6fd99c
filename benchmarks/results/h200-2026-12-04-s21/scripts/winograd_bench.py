"""Micro-benchmark (twenty-first session): KernelOPT's Winograd F(2x2, 3x3) convolution against
cuDNN on every float32 3x3, stride-1, padding-1 convolution of the bench problems, at the
problems' full sizes, in NCHW and channels-last, TF32 off; with each form's largest error
against a float64 convolution. Prints one line per distinct shape and writes JSON to argv[1]."""

import json
import sys
from pathlib import Path

import torch
import torch.nn as nn

from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_winograd_convolution
import importlib.util
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

    def hook(mod, args, _out, seen=seen):
        seen.append((tuple(args[0].shape), tuple(mod.weight.shape), mod.bias is not None))

    for mod in model.modules():
        if (
            isinstance(mod, nn.Conv2d)
            and mod.kernel_size == (3, 3)
            and mod.stride == (1, 1)
            and mod.padding == (1, 1)
            and mod.dilation == (1, 1)
            and mod.groups == 1
        ):
            mod.register_forward_hook(hook)
    with torch.no_grad():
        model(*inputs)
    for key in seen:
        shapes.setdefault(key, []).append(path.stem)
    del model, inputs
    torch.cuda.empty_cache()

timer = _Timer("cuda")


def median_ms(fn, args, rounds=20):
    for _ in range(3):
        timer.time(fn, args)
    samples = []
    for _ in range(rounds):
        timer.flush()
        samples.append(timer.time(fn, args)[0])
    samples.sort()
    return samples[len(samples) // 2]


rows = []
for (xs, ws, has_bias), problems in shapes.items():
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(xs, device="cuda", generator=gen)
    w = torch.randn(ws, device="cuda", generator=gen) / (ws[1] * 9) ** 0.5
    b = torch.randn(ws[0], device="cuda", generator=gen) if has_bias else None
    with torch.no_grad():
        ref64 = torch.convolution(x.double(), w.double(), None if b is None else b.double(), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
        row = {"problems": problems, "input": xs, "weight": ws}
        for layout in ("nchw", "channels_last"):
            fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
            xl, wl = x.to(memory_format=fmt), w.to(memory_format=fmt)
            args = [xl, wl, b, (1, 1), (1, 1), (1, 1), False, (0, 0), 1]
            for name, fn in (("cudnn", torch.convolution), ("winograd", kernelopt_winograd_convolution)):
                out = fn(*args)
                err = (out.double() - ref64).abs().max().item()
                row[f"{name}_{layout}_ms"] = round(median_ms(fn, args), 4)
                row[f"{name}_{layout}_err"] = err
                del out
        rows.append(row)
        print(
            xs, ws, problems,
            "cudnn nchw/cl %.3f/%.3f ms" % (row["cudnn_nchw_ms"], row["cudnn_channels_last_ms"]),
            "winograd nchw/cl %.3f/%.3f ms" % (row["winograd_nchw_ms"], row["winograd_channels_last_ms"]),
            "err ratio cl %.2f" % (row["winograd_channels_last_err"] / max(row["cudnn_channels_last_err"], 1e-30)),
            flush=True,
        )
    torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(rows, indent=1))
