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
  fresh allocation of the candidate's filled with NaN (or the integer maximum). Since the
  twenty-fifth session every other CPU call runs each launch's programs in grid order or
  shuffled, on a draw per launch (``mixed``, from a stream of its own): a kernel that probed
  the order its programs started in (atomics read back) and took a racy path only when they
  started in grid order had the grid-order calls to itself; now its probe tells it nothing
  of the next launch's order;
* ``late``: a run of 17-32 back-to-back calls on the previous call's inputs (at most 10 s of
  them: a slow candidate gets fewer), then a checked call on new inputs, so a candidate that
  is correct for its first calls and then returns a kept result, or switches to a cheaper
  path, is checked after the switch (the performance gate checks its last timed output too);
* ``batch`` (last, reported only): a derived input shape, for ``generalizes`` or
  ``specialized to the benchmark's shapes``.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

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
    referee: bool = True
    checked: bool = True  # False: the outcome is reported, not a failure
    poison: bool = False  # fresh allocations filled with NaN (the reordered calls)

    def describe(self) -> dict[str, Any]:
        """The call as plain data for the verdict's metrics."""
        data = {k: v for k, v in asdict(self).items() if v not in (None, "grid", 0, True)}
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
    # The permute call (twelfth session) from a stream of its own: the calls drawn before it
    # came stay as they were for a given seed (a reproduction with --seed keeps working).
    extra = random.Random(seed ^ 0x7E12)
    permute = Call(
        "permute", extra.choice(inputs), {"kind": "permute", "pick": extra.getrandbits(31)}
    )
    items.insert(extra.randint(0, len(items)), [permute])
    calls = [first] + [call for item in items for call in item]
    calls.append(Call("batch", rng.choice(inputs), {"kind": "batch"}, referee=False, checked=False))
    if device == "cpu":
        # Every other call's programs in an order of their own, from a stream of its own (the
        # draws above stay as they were for a given seed).
        orders = random.Random(seed ^ 0x5EC0)
        for call in calls:
            if call.order == "grid":
                call.order, call.order_seed = "mixed", orders.getrandbits(31)
    return calls


def _unseen(rng: random.Random, taken: list[int]) -> int:
    """An input seed none of ``taken`` is."""
    while (value := rng.getrandbits(31)) in taken:
        pass
    return value


def input_seeds(calls: list[Call]) -> list[int]:
    """The input seeds of the refereed fresh calls, in schedule order (the contract's
    ``seeds``)."""
    return [c.seed for c in calls if c.kind == "fresh" and c.referee]
