"""The derived-shape calls: one batch below the benchmark's and one above it (reported only).

The schedule ends with two ``batch`` calls (``verify.schedule``): ``below`` and then
``above``, each with a ``pick`` drawn from the verification's seed, so a candidate cannot know
the size it will get. Below the benchmark's batch ``B`` the size is one of ``1 .. B-1``, above
it one of ``B+1 .. 2B``. A candidate that is exact at ``B`` and below and cheaper above
(bfloat16, a skipped term) shows on the second; one only the first showed.

Both are reported, not failed: the guard a candidate is accepted with admits the shapes the
gates checked and no other (``deploy.guard``), so a kernel specialised to the benchmark's
shapes is no wrong answer where it runs. What the report and the guard say of it must be
true, though: ``generalizes`` only when every derived call that ran matched within the strict
tolerance, and ``derived_shapes`` lists each call with its direction and outcome.

Memory: the call above may need up to twice the benchmark's inputs and outputs in every
process at once. Before it is asked for, its bytes are estimated from the first call's inputs
and outputs (``estimate_bytes``) and the call is skipped, saying so, when they exceed a share
of the memory free (``MEMORY_SHARE``; the checker reads the free memory: available RAM on the
CPU, ``torch.cuda.mem_get_info`` on the GPU). Out-of-memory errors during the call (the
candidate's, the reference's, the checker's) are reported the same way, never as a failure.
Pure: plain data in, plain data out.
"""

from __future__ import annotations

from typing import Any

from kernelopt_jupyter.verify import wire

#: The share of the free memory the call above the benchmark's batch may be estimated to
#: need; above it the call is skipped.
MEMORY_SHARE = 0.5
#: Copies of a call's inputs, outputs and forward workspace held at once across the
#: processes (the reference: its packed inputs, a working copy, its output and workspace;
#: the candidate: its inputs, output and workspace; the checker: both outputs).
INPUT_COPIES, OUTPUT_COPIES, WORK_COPIES = 3, 4, 2


def derived_batch(batch: int, spec: dict[str, Any]) -> int | None:
    """The derived call's batch size for a benchmark batch ``batch`` (``spec``: the call's
    transform: ``direction`` and ``pick``); None where there is no size below (a batch of 1)."""
    pick = int(spec.get("pick", 0))
    if spec.get("direction") == "above":
        return batch + 1 + pick % max(1, batch)
    if batch < 2:
        return None
    return 1 + pick % (batch - 1)


def _tensors(inputs: Any) -> list[dict[str, Any]]:
    """The tensor leaves of an input list's wire tree, in order (the arguments: not nested)."""
    items = inputs.get("items", []) if isinstance(inputs, dict) else inputs
    return [v for v in items if isinstance(v, dict) and v.get("t") == "tensor"]


def batch_of(inputs: Any) -> int | None:
    """The benchmark's batch: dimension 0 of the first input with a dimension, from the
    inputs' wire tree (their shapes; no data needed); None when no input has one."""
    for leaf in _tensors(inputs):
        if leaf.get("shape"):
            return int(leaf["shape"][0])
    return None


def estimate_bytes(inputs: Any, out_bytes: int, forward_peak: int, size: int) -> int:
    """The bytes a derived call of batch ``size`` is estimated to hold at once, over every
    process: inputs along the batch grow with it (the others do not), and the outputs and
    the forward's workspace grow as the inputs do. ``inputs`` is the first call's wire tree,
    ``out_bytes`` its outputs' bytes, ``forward_peak`` what the reference's forward held beyond
    its inputs."""
    batch = batch_of(inputs)
    if batch is None or batch <= 0:
        return 0
    scale = size / batch
    grown = fixed = 0
    for leaf in _tensors(inputs):
        nbytes = wire.nbytes(leaf)
        if leaf.get("shape") and int(leaf["shape"][0]) == batch:
            grown += nbytes
        else:
            fixed += nbytes
    work = max(0, forward_peak - out_bytes)
    return int(
        INPUT_COPIES * (grown * scale + fixed)
        + OUTPUT_COPIES * out_bytes * scale
        + WORK_COPIES * work * scale
    )


def over_budget(need: int, free: int | None) -> str | None:
    """Why a call estimated at ``need`` bytes is not made with ``free`` bytes free (None: it
    is made; so is every call where the free memory is unknown)."""
    if free is None or need <= MEMORY_SHARE * free:
        return None
    return (
        f"estimated at {need / 2**30:.2f} GiB over all processes, more than "
        f"{MEMORY_SHARE:.0%} of the {free / 2**30:.2f} GiB free"
    )


def entry(
    direction: str, described: Any, outcome: str, reason: str = "", *, applies: bool = True
) -> dict[str, Any]:
    """One row of the report's ``derived_shapes``: ``outcome`` is ``pass`` (within the strict
    tolerance), ``fail`` (specialised: ``reason`` says how) or ``skipped`` (not run: why).
    ``applies`` False: the problem has no such shape (no batch below 1, a shape the reference
    rejects), so the row says nothing either way of how general the candidate is."""
    row: dict[str, Any] = {"direction": direction, "described": described, "outcome": outcome}
    if reason:
        row["reason"] = reason
    if not applies:
        row["applies"] = False
    return row


def _size_text(row: dict[str, Any]) -> str:
    described = row.get("described")
    if isinstance(described, dict) and "to" in described:
        return f"batch {described['to']} ({row['direction']})"
    return f"the batch {row['direction']}"


def generalization(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The correctness metrics' ``shapes`` (with ``derived`` and ``reason``) from the derived
    calls' rows: specialised if one failed; general if every one that applies passed; general
    one way only where the other was not run (memory: the candidate's own out-of-memory
    included, so a candidate cannot raise one to hide a shortcut above the benchmark's batch);
    else not checked."""
    failed = [r for r in rows if r["outcome"] == "fail"]
    passed = [r for r in rows if r["outcome"] == "pass"]
    missing = [r for r in rows if r["outcome"] == "skipped" and r.get("applies", True)]
    if failed:
        first = failed[0]
        return {
            "shapes": "specialized to the benchmark's shapes",
            "derived": first.get("described"),
            "reason": f"{_size_text(first)}: {first.get('reason', '')}",
        }
    reasons = "; ".join(f"{_size_text(r)}: {r.get('reason', '')}" for r in missing or rows)
    if passed and missing:
        ways = " and ".join(sorted({r["direction"] for r in passed}))
        return {
            "shapes": f"generalizes {ways} the benchmark's batch only",
            "derived": passed[0].get("described"),
            "reason": reasons,
        }
    if passed:
        return {"shapes": "generalizes", "derived": passed[0].get("described")}
    if rows:
        return {"shapes": "not checked", "reason": reasons}
    return {}


def shape_rule(rows: list[dict[str, Any]]) -> str:
    """The shape rule in words: the gates checked the benchmark's shape (the one the guard
    admits), and what each derived batch showed (reported only)."""
    batches = [
        r["described"]["from"]
        for r in rows
        if isinstance(r.get("described"), dict) and "from" in r["described"]
    ]
    own = f"the benchmark's batch, {batches[0]}" if batches else "the benchmark's batch"
    if not rows:
        return f"verified at {own}, only"
    words = {
        "pass": "matches within the strict tolerance",
        "fail": "does not match",
        "skipped": "not run",
    }
    parts = []
    for row in rows:
        text = f"{_size_text(row)} {words.get(row['outcome'], row['outcome'])}"
        if row["outcome"] == "skipped" and row.get("reason"):
            text += f" ({row['reason']})"
        parts.append(text)
    return f"verified at {own}; derived batches, reported only: " + "; ".join(parts)
