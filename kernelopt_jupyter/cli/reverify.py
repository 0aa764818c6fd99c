"""``kernelopt reverify MODULE``: re-run the gates on an export whose setup changed.

Exit codes: 0 nothing changed, or every shape verified before still passes (the manifest now
records this setup); 1 a shape verified before fails now (the guard no longer admits it);
2 bad input (not an export, unreadable files, unusable device).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from kernelopt_jupyter import defaults
from kernelopt_jupyter.cli.export import _error, json_command, show_check


def _reverify(args: argparse.Namespace, out: TextIO, sink: list[dict[str, Any]]) -> int:
    from kernelopt_jupyter.deploy.packaging import ExportError, read_manifest
    from kernelopt_jupyter.deploy.recheck import export_folder, reverify
    from kernelopt_jupyter.device import DeviceError, resolve_device
    from kernelopt_jupyter.problem import ProblemError
    from kernelopt_jupyter.verify import VerifyOptions

    path = Path(args.module)
    try:
        device = resolve_device(args.device)
        seeds = args.seeds or int(read_manifest(export_folder(path)).get("seeds", defaults.SEEDS))
        options = VerifyOptions(device=device, seeds=seeds, time_limit_s=args.hang_limit)
        result = reverify(path, options, force=args.force, on_check=show_check(out))
    except ExportError as exc:
        return _error("reverify", str(exc), exc.code)
    except (DeviceError, ProblemError) as exc:
        return _error("reverify", str(exc))
    if not result.changes:
        print(
            "unchanged: "
            + (
                "re-verified anyway (--force)"
                if args.force
                else "torch, Triton, GPU and files are as verified; nothing to do"
            ),
            file=out,
        )
    else:
        print("changed: " + "; ".join(result.changes), file=out)
    if result.report is not None:
        print(result.report.summary(), file=out)
        if result.lost:
            print(
                f"no longer verified (now the reference path): {', '.join(result.lost)}", file=out
            )
        print(f"updated {result.package / 'manifest.json'}", file=out)
    sink.append(result.to_dict())
    return 0 if result.ok else 1


run = json_command(_reverify)
