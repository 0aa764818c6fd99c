"""What a verification varies beyond the inputs' values: the weights a candidate is given, how
its inputs are handed over, and the process state its forward must leave alone.

Pure helpers on tensors and plain data, used by the reference's process (``jittered`` and
``nudged`` weights), the candidate's process (``handed_over`` inputs, ``rng_fingerprint``) and
the schedule that decides which call gets what (``verify.schedule``).

A candidate is a drop-in replacement for the reference module, so everything the reference
accepts is part of the contract: any weights (not only the constructor's draws), the same
tensor objects refilled or new ones, a write into an input that bumps no version counter,
``torch.inference_mode`` as well as ``torch.no_grad``. A forward must also leave the caller's
process as it found it: the global random generators keep their state unless the reference's
own forward draws from them.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

import torch

#: A jittered parameter that is positive everywhere is multiplied by ``exp(N(0, s^2))`` with
#: this ``s`` (it stays positive: a gain, a scale); any other moves by ``N(0, (s * rms)^2)``.
JITTER_SPREAD = 0.5
#: The spread of a jittered parameter that is zero everywhere (a bias at construction).
JITTER_ZERO_STD = 0.1


def jittered(state: dict[str, Any], seed: int, names: list[str]) -> dict[str, Any]:
    """``state`` with every floating parameter among ``names`` moved off its value at random.

    Buffers stay as they are: a buffer the constructor fills with a constant is often part of
    the problem's definition (a causal mask), and a candidate may rely on it. A parameter is a
    weight: a candidate that ignores one because the constructor makes it ones is wrong for
    every trained model.
    """
    gen = torch.Generator().manual_seed(seed)
    out = dict(state)
    for name in names:
        value = state.get(name)
        if not isinstance(value, torch.Tensor) or not _floating(value) or value.numel() == 0:
            continue
        base = value.detach().to("cpu", torch.float32)
        noise = torch.randn(base.shape, generator=gen)
        if bool((base > 0).all()):
            moved = base * torch.exp(JITTER_SPREAD * noise)
        else:
            rms = float(base.pow(2).mean().sqrt())
            std = JITTER_SPREAD * rms if rms > 0 and math.isfinite(rms) else JITTER_ZERO_STD
            moved = base + std * noise
        out[name] = moved.to(value.device, value.dtype)
    return out


def nudged(state: dict[str, Any], names: list[str], seed: int) -> dict[str, Any]:
    """``state`` with one element of each floating parameter among ``names`` changed.

    A weight cache that is refreshed when a few sampled entries change (rather than on every
    load or by a full comparison) then returns results of the old weights: the changed
    element of a large weight is one of its sampled entries only by a small chance.
    """
    rng = random.Random(seed)
    out = dict(state)
    for name in names:
        value = state.get(name)
        if not isinstance(value, torch.Tensor) or not _floating(value) or value.numel() == 0:
            continue
        value = value.detach().clone()
        flat = value.view(-1)
        index = rng.randrange(flat.numel())
        old = float(flat[index])
        flat[index] = old + 1.0 + abs(old) if math.isfinite(old) else 0.5
        out[name] = value
    return out


def reload_state(
    model: torch.nn.Module,
    loaded: Any,
    device: str,
    header: dict[str, Any],
    saved: dict[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The weights a reload of kind ``header["kind"]`` loads into the reference ``model``,
    and the first instance's weights to keep while a second one runs.

    ``draw``: the constructor's, under another seed; ``jitter``: those, moved off their values
    (:func:`jittered`); ``nudge``: the current ones with one element of each parameter changed
    (:func:`nudged`); ``twin``: jittered weights for a second instance, the current ones kept;
    ``back``: the kept ones again.
    """
    kind = str(header.get("kind") or "draw")
    seed = int(header["seed"])
    names = [name for name, _ in model.named_parameters()]
    current = dict(model.state_dict())
    if kind == "back":
        if saved is None:
            raise ValueError("a 'back' reload with no first instance's weights kept")
        return saved, None
    if kind == "nudge":
        return nudged(current, names, seed), saved
    state = dict(loaded.make_model(device, seed=seed).state_dict())
    if kind in ("jitter", "twin"):
        state = jittered(state, seed, names)
    if kind == "twin":
        saved = {k: v.clone() for k, v in current.items()}
    return state, saved


def handed_over(inputs: list[Any], refill: str) -> list[Any]:
    """The call's inputs as the candidate gets them: the refilled buffers themselves, or
    (``refill="view"``) new tensor objects over the same memory."""
    if refill != "view":
        return inputs
    return [v.view_as(v) if isinstance(v, torch.Tensor) else v for v in inputs]


def refill_silently(buffer: torch.Tensor, values: torch.Tensor) -> None:
    """Copy ``values`` into ``buffer`` without bumping its version counter (as a kernel that
    writes the buffer does: ``.data`` has a counter of its own)."""
    buffer.data.copy_(values)


def rng_fingerprint() -> str:
    """A digest of the process's global random generators: torch's CPU generator, every
    initialised CUDA device's, and Python's ``random``."""
    h = hashlib.sha256()
    h.update(torch.random.get_rng_state().numpy().tobytes())
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for state in torch.cuda.get_rng_state_all():
            h.update(state.numpy().tobytes())
    h.update(repr(random.getstate()).encode())
    return h.hexdigest()


def summarize_state(state: dict[str, Any]) -> dict[str, list[Any]]:
    """Each tensor of a state dict as ``[shape, dtype, digest]`` (plain data for the wire)."""
    from kernelopt_jupyter.verify.sandbox import digest

    return {
        name: [list(value.shape), str(value.dtype), digest(value)]
        for name, value in state.items()
        if isinstance(value, torch.Tensor)
    }


def state_differences(
    reference: dict[str, list[Any]], candidate: dict[str, list[Any]], forward_changed: set[str]
) -> list[str]:
    """Where the candidate's state (``summarize_state``) is not what was loaded into it: a
    name missing, another shape or dtype, or other values where no forward of the reference
    changes that entry (a running statistic is compared by the calls themselves)."""
    found = []
    for name, (shape, dtype, value) in sorted(reference.items()):
        mine = candidate.get(name)
        if mine is None:
            found.append(f"{name} is missing")
        elif list(mine[0]) != list(shape) or mine[1] != dtype:
            found.append(
                f"{name} is {mine[1]} {tuple(mine[0])} where {dtype} {tuple(shape)} was loaded"
            )
        elif name not in forward_changed and mine[2] != value:
            found.append(f"{name} holds other values than were loaded")
    return found


def _floating(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()
