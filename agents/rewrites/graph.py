"""FX-graph plumbing the rewrites share: tracing, shapes, and node matching.

The rewrites work on the module-level FX graph of ``torch.fx.symbolic_trace``: layers stay
``call_module`` nodes under their own names, parameters stay ``self.<name>`` attributes, and
shapes stay symbolic, so a rewritten forward is valid for every input shape the reference
accepts (nothing here bakes in the benchmark's sizes). Concrete shapes, where a rule needs them
(a reduction over a size-1 dimension), come from one propagation of meta tensors and are only
used to *decide* a rewrite whose result is the same for any size the graph admits.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn


class RewriteError(ValueError):
    """The model cannot be traced or rewritten (the rewrite is skipped with this reason)."""


def trace(model: nn.Module, inputs: list[Any] | None = None) -> fx.GraphModule:
    """The module-level FX graph of ``model``; :class:`RewriteError` when it cannot be traced.

    Plain symbolic tracing first (shapes stay symbolic). Where Python control flow reads a
    shape (``for t in range(x.shape[1])``), and example ``inputs`` are given, the meta tracer
    follows that flow with meta tensors: the loop is unrolled for the example's shapes, as the
    harvest's static-shape code is anyway.
    """
    try:
        return fx.symbolic_trace(model)
    except Exception as exc:  # symbolic tracing fails on shape-dependent Python control flow
        first = f"{type(exc).__name__}: {exc}"
    if inputs is not None:
        import inspect

        from torch.fx.experimental import meta_tracer

        try:
            names = list(inspect.signature(model.forward).parameters)[: len(inputs)]
            meta_args = {n: x for n, x in zip(names, inputs, strict=True)}
            return meta_tracer.symbolic_trace(model, meta_args=meta_args)
        except Exception as exc:
            first += f"; meta tracing: {type(exc).__name__}: {exc}"
    raise RewriteError(f"not symbolically traceable: {first}")


def propagate_shapes(gm: fx.GraphModule, inputs: list[Any]) -> bool:
    """Annotate ``node.meta['tensor_meta']`` by running ``inputs`` (meta tensors are enough)."""
    try:
        propagated_output(gm, inputs)
    except Exception:  # shapes are an optional hint: a rule that needs them then stays quiet
        return False
    return True


def propagated_output(gm: fx.GraphModule, inputs: list[Any]) -> Any:
    """:func:`propagate_shapes` that returns the graph's output (and raises what running it
    raised)."""
    from torch.fx.passes.shape_prop import ShapeProp

    class _Shapes(ShapeProp):
        def call_module(self, target: Any, args: Any, kwargs: Any) -> Any:
            out = layer_meta_output(self.fetch_attr(target), args, kwargs)
            return super().call_module(target, args, kwargs) if out is None else out

    return _Shapes(gm).propagate(*inputs)


#: Layers whose output has their input's shape and dtype (normalizations).
_SHAPE_KEEPING = (nn.modules.batchnorm._NormBase, nn.GroupNorm, nn.LayerNorm)


def layer_meta_output(module: Any, args: Any, kwargs: Any) -> Any:
    """The output of a layer whose shapes are documented, made directly for a meta input;
    None: run the layer (anything else, or an input that is not on the meta device).

    On the meta device, a training-mode normalization runs its whole decomposition (some
    milliseconds, hundreds of them in a DenseNet), and an RNN its CPU decomposition one
    time step at a time in Python (seconds to minutes per call at KernelBench's sequence
    lengths). A rewrite scan propagates shapes after every rule that changed the graph; the
    shapes alone are all it needs.
    """
    if not plain_torch_layer(module):
        return None  # a subclass's forward, or a hook, may change what comes out
    if isinstance(module, _SHAPE_KEEPING):
        x = args[0] if len(args) == 1 and not kwargs else None
        if isinstance(x, torch.Tensor) and x.is_meta and x.dim() >= 1:
            return torch.empty_like(x)
        return None
    return rnn_meta_output(module, args, kwargs)


def plain_torch_layer(module: Any) -> bool:
    """Whether ``module`` is one of torch's own layer classes with no hook of its own."""
    return (
        isinstance(module, nn.Module)
        and type(module).__module__.startswith("torch.nn.modules.")
        and not module._forward_hooks
        and not module._forward_pre_hooks
    )


def rnn_meta_output(module: Any, args: Any, kwargs: Any) -> Any:
    """What an ``nn.RNN``/``nn.GRU``/``nn.LSTM`` returns for a meta input, made from its
    documented output shapes; None for anything else (it then runs as usual)."""
    if not isinstance(module, nn.RNNBase) or not plain_torch_layer(module):
        return None
    if kwargs or not args or len(args) > 2:
        return None
    x = args[0]
    hx = args[1] if len(args) > 1 else None
    tensors = [x, *(hx if isinstance(hx, tuple | list) else [hx] if hx is not None else [])]
    if not all(isinstance(t, torch.Tensor) and t.is_meta for t in tensors) or x.dim() not in (2, 3):
        return None
    directions = 2 if module.bidirectional else 1
    proj = module.proj_size or module.hidden_size
    states = directions * module.num_layers
    if x.dim() == 2:
        seq, batch = x.shape[0], None
    elif module.batch_first:
        batch, seq = x.shape[0], x.shape[1]
    else:
        seq, batch = x.shape[0], x.shape[1]
    out_shape: tuple[int, ...] = (seq, directions * proj)
    if batch is not None:
        out_shape = (
            (batch, seq, directions * proj)
            if module.batch_first
            else (seq, batch, directions * proj)
        )
    lead = (states,) if batch is None else (states, batch)
    state_shapes = [(*lead, proj)]
    if isinstance(module, nn.LSTM):
        state_shapes.append((*lead, module.hidden_size))
    if hx is not None and [tuple(t.shape) for t in tensors[1:]] != state_shapes:
        return None  # a state the layer refuses: let it say why
    out = torch.empty(out_shape, dtype=x.dtype, device="meta")
    states_out = [torch.empty(s, dtype=x.dtype, device="meta") for s in state_shapes]
    if isinstance(module, nn.LSTM):
        return out, tuple(states_out)
    return out, states_out[0]


def shape_of(node: Any) -> tuple[int, ...] | None:
    """The propagated shape of a node's tensor value, or None when unknown."""
    if not isinstance(node, fx.Node):
        return None
    meta = node.meta.get("tensor_meta")
    shape = getattr(meta, "shape", None)
    return tuple(int(s) for s in shape) if shape is not None else None


def module_of(gm: fx.GraphModule, node: fx.Node) -> nn.Module | None:
    """The submodule a ``call_module`` node calls (None for other nodes)."""
    if node.op != "call_module":
        return None
    return gm.get_submodule(str(node.target))


def only_user(node: fx.Node) -> fx.Node | None:
    """The single node that uses ``node``, or None when it has several (or none)."""
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def arg(node: fx.Node, index: int, name: str, default: Any = None) -> Any:
    """Argument ``index`` (positional) or ``name`` (keyword) of a call node."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def cleanup(gm: fx.GraphModule) -> None:
    """Remove dead nodes (pure ones only) and recompile the module."""
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()


def scalar(value: Any) -> float | None:
    """A Python number used as a constant operand (bools excluded), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def kernel_dtype(x: Any) -> bool:
    """Whether ``x``'s propagated dtype is one the project's own kernels take (float32/16,
    bfloat16; a double stays with the vendor call)."""
    meta = x.meta.get("tensor_meta") if isinstance(x, fx.Node) else None
    return getattr(meta, "dtype", None) in (torch.float32, torch.float16, torch.bfloat16)


def per_dim(value: Any, dims: int) -> tuple[int, ...] | None:
    """A convolution or pooling argument (an int, or a sequence of one int per spatial
    dimension) as a tuple of ``dims`` ints; None for anything else."""
    if type(value) is int:
        return (value,) * dims
    if (
        isinstance(value, list | tuple)
        and len(value) == dims
        and all(type(v) is int for v in value)
    ):
        return tuple(value)
    return None
