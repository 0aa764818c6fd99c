"""The call schedule of one verification, drawn from one seed a candidate cannot know.

``kernelopt verify`` draws the seed fresh (``secrets.randbits``) unless ``--seed`` is given,
and writes it in the verdict, so a failure reproduces exactly and a cheat cannot plan for the
calls it will get. From the seed: the input seeds, how many extra calls, where the special
calls go, which element is perturbed, which weights are reloaded.

Calls, all on the same input buffers in the candidate's process (refilled in place with the
next call's values, so a result cached by address or identity shows up):

* ``fresh``: the inputs of an input seed (the first call is one; ``seeds`` of them);
* ``repeat`` then ``perturb``: one call's inputs again, then the same inputs with one element
  changed (a fast path chosen by sampling a few values returns the old answer);
* ``stress``: floating inputs scaled up (large magnitudes);
* ``shift``: floating inputs moved off zero by 16 times their root mean square (a one-pass
  variance, or any formula that cancels catastrophically away from a zero mean, shows);
  skipped where the reference rejects such inputs or returns non-finite values on them;
* ``zeros``: one row (along the last dimension) of each floating input set to zero (a norm
  without its ``eps`` divides by zero there); skipped like ``shift``;
* ``permute``: the rows of every integer or boolean input (masks, labels, indices) reordered
  (a fixed mask the problem builds is otherwise the same in every draw, and a candidate could
  hard-code it); not made where there is none, skipped like ``shift``;
* ``reload``: new weights loaded in place into both models, then a call;
* ``reverse`` / ``shuffle`` (CPU): a call with every launch's programs run in another order
  (the interpreter runs them in grid order, which hides races between programs), on inputs
  of their own (no earlier call's, so nothing kept from one holds their answer), with every
  fresh allocation of the candidate's filled with NaN (or the integer maximum). Every other
  CPU call runs each launch's programs in grid order or shuffled, on a draw per launch
  (``mixed``, from a stream of its own): a kernel that probes the order its programs start
  in (atomics read back) and takes a racy path only when they start in grid order would
  otherwise have the grid-order calls to itself; this way its probe tells it nothing of the
  next launch's order;
* ``late``: a run of 17-32 back-to-back calls on the previous call's inputs (at most 10 s of
  them: a slow candidate gets fewer), then a checked call on new inputs, so a candidate that
  is correct for its first calls and then returns a kept result, or switches to a cheaper
  path, is checked after the switch (the performance gate checks its last timed output too);
* ``batch`` (last, two calls, reported only): a derived input shape below the benchmark's
  batch, then one above it, each size drawn (``verify.derived``), for ``generalizes`` or
  ``specialized to the benchmark's shapes`` and the report's ``derived_shapes``.

What the calls above would otherwise hold fixed is varied too, from a stream of its own (the
draws above stay as they were for a given seed):

* ``signs``: every floating input's elements change sign at random (a problem whose inputs
  are ``torch.rand`` never shows a dropped ``abs`` otherwise); ``tiny``: floating inputs
  scaled down by 1000 (an epsilon in the wrong place is exact at unit scale and on an
  all-zero row, wrong at small magnitudes); the ``shift`` goes down as often as up. All three
  are skipped like ``shift`` where the reference cannot take them;
* ``jitter``: a reload whose every floating parameter and buffer is moved off its
  constructor value (a gain that is ones in every draw can otherwise be ignored); buffers
  that are positive stay positive (a running variance);
* ``nudge``: a reload that changes one element of each parameter (a weight cache refreshed
  by sampling a few entries is caught stale);
* ``twin`` then ``back``: a second instance of the candidate, built as the first and given
  other (jittered) weights, runs a call; then the first runs again, and must be unaffected
  (state shared between instances: a table keyed by shape, or by an ``id`` reused after a
  deletion);
* the candidate's inputs arrive as the same tensor objects refilled in place on most calls,
  as new tensor objects over the same memory on some (``refill="view"``: a result exact only
  for the object first seen shows), and refilled through ``.data`` on others
  (``refill="silent"``: a write that bumps no version counter, as a kernel writing the
  buffer makes, so a memo keyed on the version counter returns a stale answer);
* some calls run under ``torch.inference_mode`` instead of ``torch.no_grad``
  (``context="inference"``).
"""

from __future__ import annotations

import random
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

#: The directions of the derived-shape calls (``verify.derived``), in the order they run: the
#: riskier one last (a candidate that crashes above the benchmark's batch leaves the call
#: below reported).
DIRECTIONS = ("below", "above")
#: The length of the ``late`` call's run of back-to-back calls.
LATE_MIN, LATE_MAX = 17, 32


def fresh_seed() -> int:
    """A verification seed nobody can predict."""
    return secrets.randbits(31)


@dataclass
class Call:
    """One call of the schedule."""

    kind: str
    seed: int
    transform: dict[str, Any] = field(default_factory=lambda: {"kind": "fresh"})
    order: str = "grid"
    order_seed: int = 0
    reload_seed: int | None = None
    burst: int = 0  # back-to-back calls on the previous inputs just before this call
    #: "draw" (from the constructor), "jitter", "nudge", "twin" or "back" (verify.contract)
    reload_kind: str = "draw"
    refill: str = "inplace"  # how the candidate's inputs arrive: "inplace", "view", "silent"
    context: str = "no_grad"  # the forward's autograd context: "no_grad" or "inference"
    referee: bool = True
    checked: bool = True  # False: the outcome is reported, not a failure
    poison: bool = False  # fresh allocations filled with NaN (the reordered calls)

    def describe(self) -> dict[str, Any]:
        """The call as plain data for the verdict's metrics."""
        plain = (None, "grid", 0, True, "draw", "inplace", "no_grad")
        data = {k: v for k, v in asdict(self).items() if v not in plain}
        data.setdefault("seed", self.seed)
        return data


def draw_schedule(seed: int, seeds: int, device: str) -> list[Call]:
    """The calls of one verification (see the module docstring)."""
    rng = random.Random(seed)
    inputs = [rng.getrandbits(31) for _ in range(max(1, seeds))]
    first = Call("fresh", inputs[0])
    items: list[list[Call]] = [[Call("fresh", s)] for s in inputs[1:]]
    for _ in range(rng.randint(0, 2)):  # a random number of calls
        items.append([Call("fresh", rng.getrandbits(31), referee=False)])
    picked = rng.choice(inputs)
    items.append(
        [
            Call("repeat", picked, referee=False),
            Call("perturb", picked, {"kind": "perturb", "pick": rng.getrandbits(31)}),
        ]
    )
    items.append([Call("stress", rng.choice(inputs), {"kind": "stress"})])
    items.append([Call("shift", rng.choice(inputs), {"kind": "shift"})])
    items.append(
        [Call("zeros", rng.choice(inputs), {"kind": "zeros", "pick": rng.getrandbits(31)})]
    )
    items.append([Call("reload", rng.getrandbits(31), reload_seed=rng.getrandbits(31))])
    items.append([Call("late", rng.getrandbits(31), burst=rng.randint(LATE_MIN, LATE_MAX))])
    if device == "cpu":
        # Inputs no other call has, from a stream of their own (the draws of ``rng`` stay as
        # they were for a given seed): a workspace the candidate keeps between calls, which
        # is no fresh allocation and so not poisoned, then holds another input's results,
        # and a program that reads one before the program that writes it has run reads those.
        own = random.Random(seed ^ 0x0DE4)
        unseen = [_unseen(own, inputs), _unseen(own, inputs)]
        rng.choice(inputs)
        items.append([Call("reverse", unseen[0], order="reverse", referee=False, poison=True)])
        rng.choice(inputs)
        items.append(
            [
                Call(
                    "shuffle",
                    unseen[1],
                    order="shuffle",
                    order_seed=rng.getrandbits(31),
                    referee=False,
                    poison=True,
                )
            ]
        )
    rng.shuffle(items)
    # The permute call from a stream of its own: the other calls a seed draws are the same
    # as without it (a reproduction with --seed from before the permute call keeps working).
    extra = random.Random(seed ^ 0x7E12)
    permute = Call(
        "permute", extra.choice(inputs), {"kind": "permute", "pick": extra.getrandbits(31)}
    )
    items.insert(extra.randint(0, len(items)), [permute])
    items = _contract_variations(seed, inputs, items)
    calls = [first] + [call for item in items for call in item]
    calls += _derived_calls(seed, rng.choice(inputs), inputs)
    _vary_delivery(seed, calls)
    if device == "cpu":
        # Every other call's programs in an order of their own, from a stream of its own (the
        # draws above stay as they were for a given seed).
        orders = random.Random(seed ^ 0x5EC0)
        for call in calls:
            if call.order == "grid":
                call.order, call.order_seed = "mixed", orders.getrandbits(31)
    return calls


#: How many checked calls (never the first) get their inputs as new tensor objects, through
#: a write that bumps no version counter, and under ``torch.inference_mode``.
VIEW_CALLS, SILENT_CALLS, INFERENCE_CALLS = 2, 2, 2
#: The ``tiny`` call's scale of the floating inputs.
TINY_SCALE = 1e-3


def _contract_variations(seed: int, inputs: list[int], items: list[list[Call]]) -> list[list[Call]]:
    """``items`` with the sign, magnitude and weight variations inserted at drawn places and
    the shift's direction drawn (module docstring)."""
    rng = random.Random(seed ^ 0xC0A7)
    for item in items:
        for call in item:
            if call.kind == "shift":
                call.transform = {**call.transform, "sign": rng.choice((1.0, -1.0))}
    extra = [
        [Call("signs", rng.choice(inputs), {"kind": "signs", "pick": rng.getrandbits(31)})],
        [Call("tiny", rng.choice(inputs), {"kind": "tiny", "scale": TINY_SCALE})],
        [
            Call(
                "jitter", rng.getrandbits(31), reload_seed=rng.getrandbits(31), reload_kind="jitter"
            )
        ],
        [Call("nudge", rng.getrandbits(31), reload_seed=rng.getrandbits(31), reload_kind="nudge")],
        [
            Call("twin", rng.getrandbits(31), reload_seed=rng.getrandbits(31), reload_kind="twin"),
            Call("back", rng.getrandbits(31), reload_seed=rng.getrandbits(31), reload_kind="back"),
        ],
    ]
    out = list(items)
    for item in extra:
        out.insert(rng.randint(0, len(out)), item)
    return out


def _vary_delivery(seed: int, calls: list[Call]) -> None:
    """Draw which checked calls (never the first, never a burst's) get their inputs as new
    objects or through a silent write, and which run under inference mode."""
    rng = random.Random(seed ^ 0x0B1E)
    eligible = [c for c in calls[1:] if c.checked and not c.burst]
    ids = {id(c) for c in eligible}
    for call in rng.sample(eligible, min(len(eligible), VIEW_CALLS)):
        call.refill = "view"
    # A silent write follows a call that handed over the same objects: a memo keyed on the
    # object and its version counter then sees both unchanged.
    after_inplace = [i for i in range(1, len(calls)) if id(calls[i]) in ids]
    rng.shuffle(after_inplace)
    silent = 0
    for i in after_inplace:
        if silent == SILENT_CALLS:
            break
        after = calls[i + 1].refill if i + 1 < len(calls) else "inplace"
        if calls[i].refill == calls[i - 1].refill == "inplace" and after != "silent":
            calls[i].refill = "silent"
            silent += 1
    for call in rng.sample(eligible, min(len(eligible), INFERENCE_CALLS)):
        call.context = "inference"


def _derived_calls(seed: int, below_seed: int, inputs: list[int]) -> list[Call]:
    """The derived-shape calls (``verify.derived``), below then above the benchmark's batch,
    their sizes drawn from a stream of their own (the draws above stay as they were for a
    given seed; the call below keeps the input seed the single derived call had)."""
    rng = random.Random(seed ^ 0xBA7C)
    seeds = {"below": below_seed, "above": rng.choice(inputs)}
    return [
        Call(
            "batch",
            seeds[direction],
            {"kind": "batch", "direction": direction, "pick": rng.getrandbits(31)},
            referee=False,
            checked=False,
        )
        for direction in DIRECTIONS
    ]


def _unseen(rng: random.Random, taken: list[int]) -> int:
    """An input seed none of ``taken`` is."""
    while (value := rng.getrandbits(31)) in taken:
        pass
    return value


def input_seeds(calls: list[Call]) -> list[int]:
    """The input seeds of the refereed fresh calls, in schedule order (the contract's
    ``seeds``)."""
    return [c.seed for c in calls if c.kind == "fresh" and c.referee]
