"""The public pattern ops rearrange, reduce and repeat, on `tensorops._dispatch`.

Each op is its `Op` (a name and a planner) and a public
function that hands the call to `call`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

from tensorops._concat import plan_concat
from tensorops._dispatch import Op, call, call_many, keyword_arguments, stack_lists
from tensorops._errors import MISSING, unknown_option
from tensorops._plan import plan_recipe
from tensorops._types import REDUCTIONS, Backend, Executor, Reduction

__all__ = ["CALLABLE", "REARRANGE", "REDUCE", "REPEAT", "rearrange", "reduce", "repeat"]

ArrayT = TypeVar("ArrayT")

#: What a reduce plan is keyed on besides the pattern: the reduction's name, or this
#: for every callable (a fresh lambda per call still finds the plan). Not a str, so
#: that no reduction name can be taken for it.
CALLABLE = ("callable",)


def _plan_rearrange(
    pattern: str, shape: Any, lengths: Any, variant: Any, backend: Backend
) -> Executor:
    if "+" in pattern or "," in pattern:  # concatenation, splitting: one array per term
        return plan_concat(pattern, shape, lengths, backend)
    return plan_recipe("rearrange", pattern, shape, lengths).executor(backend)


def _plan_reduce(
    pattern: str, shape: Any, lengths: Any, variant: Any, backend: Backend
) -> Executor:
    if variant == CALLABLE:  # not `is`: Dynamo before 2.13 rebuilds traced tuples
        return plan_recipe("reduce", pattern, shape, lengths).executor(backend)
    if variant == "rearrange":  # einops' name for a reduce that reduces nothing
        return _plan_rearrange(pattern, shape, lengths, variant, backend)
    if variant == "repeat":  # einops' name for a reduce that adds the axes new on the right
        return _plan_repeat(pattern, shape, lengths, variant, backend)
    if variant not in REDUCTIONS:
        raise unknown_option("reduction", variant, REDUCTIONS, "or a callable f(x, axes)")
    return plan_recipe("reduce", pattern, shape, lengths).executor(backend, variant)


def _plan_repeat(
    pattern: str, shape: Any, lengths: Any, variant: Any, backend: Backend
) -> Executor:
    return plan_recipe("repeat", pattern, shape, lengths).executor(backend)


REARRANGE = Op("rearrange", _plan_rearrange, "rearrange(x, 'a b -> b a')", stack_lists)
REDUCE = Op("reduce", _plan_reduce, "reduce(x, 'a b -> a', 'sum')", stack_lists)
REPEAT = Op("repeat", _plan_repeat, "repeat(x, 'a -> a b', b=2)", stack_lists)

#: A list of arrays: stacked for a pattern of one input term, else one array per term
#: (a subclass too: a node of a torch.compile graph gets torch.fx's immutable_list).
_SEQUENCES = (list, tuple)

#: einops' names of the array and the pattern, for calls that pass them as keywords.
_NAMES = ("tensor", "pattern")


@overload
def rearrange(x: Sequence[ArrayT], pattern: str, /, **lengths: int) -> ArrayT: ...
@overload
def rearrange(x: ArrayT, pattern: str, /, **lengths: int) -> ArrayT: ...
@overload
def rearrange(x: ArrayT, /, *, pattern: str, **lengths: int) -> ArrayT: ...
@overload
def rearrange(*, tensor: ArrayT, pattern: str, **lengths: int) -> ArrayT: ...
def rearrange(x: Any = MISSING, pattern: Any = MISSING, /, **lengths: Any) -> Any:
    """Reorder, split and merge axes by a pattern; returns a view whenever the framework can.

    ``+`` concatenates and splits (see the concatenation page of the docs): a list
    with one array per input term is concatenated along the output's ``(a + b)``
    group, matched to its parts by axis names; an input's ``(a + b)`` group is split
    (views), one array per output term, returned as a tuple.

    Args:
        x: an array of any supported family, or a list / tuple of arrays: one per
            input term when the pattern has several, else arrays of one shape,
            stacked along a new leading axis first.
        pattern: ``"left -> right"``, e.g. ``"b c (h w) -> b h w c"``. Both sides
            name the same axes; ``1`` and ``()`` are unit axes that may appear or
            disappear; ``...`` stands for any number of axes. ``(a + b)`` joins
            parts end to end; with it, either side may have several terms.
        **lengths: lengths of axes that cannot be inferred from the shape. As in
            einops, ``tensor=`` and ``pattern=`` are the array and the pattern
            when they are not given positionally; when they are, any identifier
            is an axis name, ``tensor`` and ``pattern`` included.

    Returns:
        An array of the input's family, device and dtype; a tuple of them, one per
        output term, when the pattern has several.

    Raises:
        TensorOpsError: the pattern is malformed or does not fit the shape.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.zeros((8, 3, 32, 32))
        >>> tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4).shape
        (8, 64, 48)
        >>> tops.rearrange([x[0], x[1]], "n c h w -> n h w c").shape
        (2, 32, 32, 3)
        >>> tops.rearrange(tensor=x, pattern="b c h w -> b (c h w)").shape
        (8, 3072)
        >>> a, b = np.zeros((2, 3)), np.ones((2, 4))
        >>> tops.rearrange([a, b], "n c1, n c2 -> n (c1 + c2)")
        array([[0., 0., 0., 1., 1., 1., 1.],
               [0., 0., 0., 1., 1., 1., 1.]])
        >>> [y.shape for y in tops.rearrange(np.zeros((2, 7)), "n (c1 + c2) -> n c1, c2 n", c1=3)]
        [(2, 3), (4, 2)]
    """
    if pattern is MISSING:
        x, pattern = keyword_arguments("rearrange", (x, pattern), _NAMES, lengths)
    if isinstance(x, _SEQUENCES) and type(pattern) is str and "," in pattern.partition("->")[0]:
        return call_many(REARRANGE, x, pattern, lengths, None, None)  # one array per term
    return call(REARRANGE, x, pattern, lengths, None, None)


@overload
def reduce(
    x: Sequence[ArrayT], pattern: str, reduction: Reduction | None = None, /, **lengths: Any
) -> ArrayT: ...
@overload
def reduce(
    x: ArrayT, pattern: str, reduction: Reduction | None = None, /, **lengths: Any
) -> ArrayT: ...
@overload
def reduce(x: ArrayT, /, *, pattern: str, **lengths: Any) -> ArrayT: ...
@overload
def reduce(*, tensor: ArrayT, pattern: str, **lengths: Any) -> ArrayT: ...
def reduce(
    x: Any = MISSING, pattern: Any = MISSING, reduction: Reduction | None = None, /, **lengths: Any
) -> Any:
    """Rearrange and reduce the axes missing on the right.

    Args:
        x: an array, or a list of arrays of one shape (stacked first).
        pattern: e.g. ``"b c (h 2) (w 2) -> b c h w"``; an integer on the left is
            an anonymous axis that is reduced; ``1`` on the right keeps a reduced
            dimension as length 1.
        reduction: ``"sum"``, ``"mean"``, ``"max"``, ``"min"``, ``"prod"``,
            ``"any"``, ``"all"``, or a callable ``f(x, axes)`` that reduces the
            tuple of axes ``axes`` of ``x`` and drops them; ``"rearrange"``
            reduces nothing (a `rearrange`, as in einops) and ``"repeat"`` adds
            the axes new on the right (a `repeat`, as in einops). Given positionally or,
            as in einops, as the keyword ``reduction=``; when it is positional, a
            keyword ``reduction=`` is the length of an axis of that name.
        **lengths: lengths of axes that cannot be inferred; ``tensor=`` and
            ``pattern=`` are the array and the pattern when they are not given
            positionally (as in einops), else axis lengths.

    Returns:
        An array of the input's family; its dtype follows the framework's own
        rules for the reduction (NumPy's mean of ints is float64, for example).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
        >>> tops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max")[0, 0]
        array([[ 5.,  7.],
               [13., 15.]])
        >>> tops.reduce(x, "b c h w -> b c", lambda t, axes: t.sum(axis=axes))
        array([[120.]])
        >>> tops.reduce(tensor=x, pattern="b ... -> (b s) ...", reduction="repeat", s=2).shape
        (2, 1, 4, 4)
    """
    if pattern is MISSING:
        x, pattern = keyword_arguments("reduce", (x, pattern), _NAMES, lengths)
    if reduction is None:
        reduction = lengths.pop("reduction", None)
    # a name or a bad value is checked when the plan is made, with the call's context
    variant = reduction if type(reduction) is str or not callable(reduction) else CALLABLE
    return call(REDUCE, x, pattern, lengths, variant, reduction)


@overload
def repeat(x: Sequence[ArrayT], pattern: str, /, **lengths: int) -> ArrayT: ...
@overload
def repeat(x: ArrayT, pattern: str, /, **lengths: int) -> ArrayT: ...
@overload
def repeat(x: ArrayT, /, *, pattern: str, **lengths: int) -> ArrayT: ...
@overload
def repeat(*, tensor: ArrayT, pattern: str, **lengths: int) -> ArrayT: ...
def repeat(x: Any = MISSING, pattern: Any = MISSING, /, **lengths: Any) -> Any:
    """Rearrange and add (tile) axes that are new on the right.

    New axes are broadcast without copying where the framework can: on NumPy the
    result is then a read-only view (``np.broadcast_to``), on PyTorch a stride-0
    view (``Tensor.expand``); copy it before writing into it. When a new axis is
    merged with an existing one, as in ``"h w -> (h 2) w"``, the final reshape
    copies.

    Args:
        x: an array, or a list of arrays of one shape (stacked first).
        pattern: e.g. ``"h w -> h w c"``; every axis new on the right needs a
            length, as a keyword or an integer literal.
        **lengths: lengths of new axes and of axes that cannot be inferred;
            ``tensor=`` and ``pattern=`` are the array and the pattern when they
            are not given positionally (as in einops), else axis lengths.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.repeat(np.zeros((30, 40)), "h w -> h w c", c=3).shape
        (30, 40, 3)
        >>> tops.repeat(np.array([1, 2]), "w -> (w 2)")
        array([1, 1, 2, 2])
        >>> tops.repeat(np.array([1, 2]), "w -> w pattern", pattern=3).shape  # an axis
        (2, 3)
        >>> tops.repeat(tensor=np.array([1, 2]), pattern="w -> w c", c=3).shape
        (2, 3)
    """
    if pattern is MISSING:
        x, pattern = keyword_arguments("repeat", (x, pattern), _NAMES, lengths)
    return call(REPEAT, x, pattern, lengths, None, None)
