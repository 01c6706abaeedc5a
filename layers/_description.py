"""What every pattern layer shares: its arguments read, its check when built, its repr.

This module knows no framework. A layer family (`tensorops.layers.torch`, ``.flax``,
``.nnx``, ``.equinox``, ``.keras``, ``.paddle``) builds its layers on the mixins of
`tensorops.layers._family`, which read a layer's constructor arguments here
(`describe`) or in `tensorops.layers._einmix` (EinMix), keep the frozen description
they get back, and call it in the forward pass. Everything the families must agree on
lives here once: einops' keyword spellings (``pattern=``, ``reduction=``), the checks
that make a bad layer fail when it is built (with the same `tensorops.TensorOpsError`
in every family), and the reprs that reproduce the constructor call.

The build-time check runs the layer on a *probe*: an array of a shape that fits the
pattern (`fitting_shape`; unknown lengths are 1). The default probe is a NumPy array
of zero strides, which allocates nothing; a family may pass its own (torch passes
meta tensors) so that the check also runs the framework's code path.

Examples:
    A description reads the call as the layer's constructor takes it, and runs the
    layer's op on an array of any family:

    >>> import numpy as np
    >>> from tensorops.layers._description import describe
    >>> description = describe("Rearrange", ("b (h w) -> b h w",), {"h": 2})
    >>> description
    Rearrange('b (h w) -> b h w', h=2)
    >>> description(np.zeros((3, 8))).shape
    (3, 2, 4)
    >>> description.arguments
    {'pattern': 'b (h w) -> b h w'}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

import tensorops as tops
from tensorops._grammar import Bracket, Dots, parse_concat
from tensorops._probes import dimension_size, probe_shapes

__all__ = [
    "LayerSpec",
    "Probe",
    "Reduction",
    "call_repr",
    "check_when_built",
    "describe",
    "fitting_shape",
    "layer_pattern",
    "numpy_probe",
    "reduction_repr",
]

#: A reduction: a name of `tensorops.reduce` (``"sum"``, ``"argmax"``, ...) or
#: ``f(x, axes) -> array``.
Reduction = str | Callable[..., Any]

#: Makes an array of a given shape for the build-time check.
Probe = Callable[[tuple[int, ...]], Any]

#: The op each pattern layer calls (Reduce also passes its reduction).
_OPS: dict[str, Callable[..., Any]] = {
    "Rearrange": tops.rearrange,
    "Reduce": tops.reduce,
    "Repeat": tops.repeat,
    "Softmax": tops.softmax,
    "LogSoftmax": tops.log_softmax,
    "Check": tops.check,
}


def numpy_probe(shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """A float32 array of `shape` whose strides are all zero: it allocates nothing."""
    return np.broadcast_to(np.zeros((), np.float32), shape)


# --- arguments, reprs ----------------------------------------------------------------------------


def layer_pattern(layer: str, pattern: str | None, lengths: dict[str, Any]) -> str:
    """The pattern `layer` is built with: positional, else einops' keyword ``pattern=``.

    When the pattern was given positionally, a keyword ``pattern=`` stays in
    `lengths`: the length of an axis named ``pattern``. `lengths` loses the
    keyword otherwise.
    """
    if pattern is None:
        pattern = lengths.pop("pattern", None)
        if pattern is None:
            raise tops.ArgumentError(
                "missing the argument 'pattern'",
                op=layer,
                hint=f"pass the pattern first, or as the keyword: {layer}(pattern='...')",
            )
    return pattern


def call_repr(layer: str, args: Sequence[str], lengths: Mapping[str, Any]) -> str:
    """``Name(arg, ..., axis=length, ...)``: the call that builds the layer again."""
    shown = [*args, *(f"{name}={value!r}" for name, value in lengths.items())]
    return f"{layer}({', '.join(shown)})"


def reduction_repr(reduction: object) -> str:
    """A reduction as it is written in the call: a quoted name, or a function's name."""
    if isinstance(reduction, str):
        return repr(reduction)
    name = getattr(reduction, "__qualname__", None)
    if isinstance(name, str) and "<" not in name:
        return name  # a named function: its name reproduces the call where it is in scope
    return repr(reduction)


# --- shapes that fit a pattern, the build-time check ----------------------------------------


def fitting_shape(
    pattern: object,
    lengths: Mapping[str, Any],
    shape: Sequence[int | None] | None = None,
    unknown: int = 1,
) -> tuple[int, ...]:
    """A shape that fits the first term of `pattern`: the probe's, or Keras' stand-in's.

    A dimension made of axes of known lengths (`lengths`, integers in the pattern) gets
    their product; one with an axis of unknown length gets the known part times
    `unknown`; a concatenation ``(a + b)`` gets its parts' lengths added.

    Without `shape`, there is one dimension per element of the term and ``...`` stands
    for no axes. With `shape` (an input's, ``None`` where a dimension is unknown), its
    known dimensions are kept and each unknown one fits its element; those under
    ``...`` get `unknown`. Shapes made with two values of `unknown` show which output
    dimensions depend on the unknown ones. A pattern that does not parse, or that
    `shape` has the wrong rank for, gives `unknown` where nothing is known: the op
    called on the shape then reports the error.

    Examples:
        >>> from tensorops.layers._description import fitting_shape
        >>> fitting_shape("b (h 2) ... c", {"c": 3})
        (1, 2, 3)
        >>> fitting_shape("b (h 2) ... c", {"c": 3}, (None, None, None, None, 3), unknown=5)
        (5, 10, 5, 5, 3)
    """
    if shape is None:
        probes = (
            probe_shapes(pattern, lengths, unknown=unknown) if isinstance(pattern, str) else None
        )
        return probes[0] if probes else ()
    dims: list[Any] = list(_dimension_elements(pattern))
    dots = [i for i, element in enumerate(dims) if isinstance(element, Dots)]
    if len(dots) == 1:  # one entry per dimension: None under '...'
        dims[dots[0] : dots[0] + 1] = [None] * max(len(shape) - len(dims) + 1, 0)
    if len(dims) != len(shape):
        dims = [None] * len(shape)
    return tuple(
        size
        if size is not None
        else (unknown if element is None else dimension_size(element, lengths, unknown))
        for size, element in zip(shape, dims, strict=True)
    )


def _dimension_elements(pattern: object) -> list[Any]:
    """The elements of the first term of `pattern`, brackets opened; none if it does not parse."""
    if not isinstance(pattern, str):
        return []
    try:
        term = parse_concat(pattern).inputs[0]
    except tops.TensorOpsError:
        return []
    return [
        inner
        for element in term.elements
        for inner in (element.elements if isinstance(element, Bracket) else (element,))
    ]


def check_when_built(layer: str, run: Callable[[], object]) -> None:
    """Call `run` (the layer on probes), so that a bad layer fails when it is built.

    An error names the layer, not the op it calls, and leaves out the probe's
    shape, which would only confuse.
    """
    try:
        run()
    except tops.TensorOpsError as error:
        raise error.with_context(op=layer, inputs=()) from None


# --- Rearrange, Reduce, Repeat, Softmax, LogSoftmax, Check ------------------------------------


@dataclass(frozen=True, slots=True)
class LayerSpec:
    """A pattern layer, checked: its op, pattern, reduction (Reduce only) and lengths.

    Calling it runs the op on an array of any family.
    """

    #: A pattern layer has no parameters (an EinMix plan lists its own).
    parameters: ClassVar[tuple[()]] = ()

    kind: str
    pattern: str
    lengths: Mapping[str, Any]
    reduction: Reduction | None = None
    #: The name in messages and the repr: the layer's class, perhaps a user's subclass.
    name: str = ""
    #: The op, and what it takes after the array: the pattern (Reduce: and the reduction).
    op: Callable[..., Any] = field(init=False, repr=False, compare=False)
    args: tuple[Any, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        reduce = self.kind == "Reduce"
        object.__setattr__(self, "op", _OPS[self.kind])
        object.__setattr__(
            self, "args", (self.pattern, self.reduction) if reduce else (self.pattern,)
        )

    def __call__(self, x: Any) -> Any:
        """The layer's op on `x`."""
        return self.op(x, *self.args, **self.lengths)

    def check(self, probe: Probe = numpy_probe) -> None:
        """Run the op on a probe of a shape that fits the pattern; raise as the layer."""
        # A callable is not run on the probe: the plan does not depend on it.
        reduction = "sum" if callable(self.reduction) else self.reduction
        spec = LayerSpec(self.kind, self.pattern, self.lengths, reduction)
        shape = fitting_shape(self.pattern, self.lengths)
        check_when_built(self.name or self.kind, lambda: spec(probe(shape)))

    def __hash__(self) -> int:
        # Hashable for the frameworks that keep a layer's static data in a jit cache key.
        return hash((self.kind, self.pattern, tuple(self.lengths.items()), self.reduction))

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments that build the layer again, by name (the lengths aside)."""
        if self.kind == "Reduce":
            return {"pattern": self.pattern, "reduction": self.reduction}
        return {"pattern": self.pattern}

    def written_args(self) -> list[str]:
        """The positional arguments as the call writes them."""
        if self.kind == "Reduce":
            return [repr(self.pattern), reduction_repr(self.reduction)]
        return [repr(self.pattern)]

    def __repr__(self) -> str:
        return call_repr(self.name or self.kind, self.written_args(), self.lengths)


def describe(
    kind: str,
    args: Sequence[Any],
    lengths: Mapping[str, Any],
    *,
    probe: Probe = numpy_probe,
    name: str | None = None,
) -> LayerSpec:
    """Read a pattern layer's constructor arguments, as einops spells them; check the layer.

    Args:
        kind: ``"Rearrange"``, ``"Reduce"``, ``"Repeat"``, ``"Softmax"``,
            ``"LogSoftmax"`` or ``"Check"``: the op the layer calls.
        args: the positional arguments: the pattern (and, for Reduce, the reduction).
        lengths: the keyword arguments: axis lengths, and ``pattern=`` /
            ``reduction=`` when those were not given positionally. Not modified.
        probe: makes the array the check runs on (default: `numpy_probe`).
        name: the layer's name in messages and its repr (default: `kind`); a
            family passes ``type(self).__name__``, so a subclass names itself.

    Returns:
        The layer's description; ``description(x)`` runs it.

    Raises:
        TensorOpsError: the pattern, the reduction or the lengths are invalid
            (the message names the layer).
        TypeError: more positional arguments than the layer takes.

    Examples:
        >>> from tensorops.layers._description import describe
        >>> describe("Reduce", ("b c (h 2) -> b c h",), {"reduction": "max"})
        Reduce('b c (h 2) -> b c h', 'max')
        >>> import tensorops as tops
        >>> try:
        ...     describe("Repeat", ("b -> b r",), {"r": 2, "pattern": 3})
        ... except tops.TensorOpsError as error:
        ...     print(str(error).splitlines()[0])
        Repeat: axis length pattern=3 is given but 'pattern' is not in the pattern
    """
    layer = name or kind
    wanted = 2 if kind == "Reduce" else 1
    if len(args) > wanted:  # Python's own message would name the family's base class
        what = "the pattern and the reduction" if kind == "Reduce" else "the pattern"
        raise TypeError(
            f"{layer}() takes {what} positionally and axis lengths as keywords; "
            f"{len(args) - wanted} more positional argument(s) given"
        )
    given = [*args, None, None]
    lengths = dict(lengths)
    pattern = layer_pattern(layer, given[0], lengths)
    reduction = None
    if kind == "Reduce":
        reduction = given[1]
        if reduction is None:  # einops' keyword spelling, Reduce(pattern, reduction="max")
            reduction = lengths.pop("reduction", None)
    spec = LayerSpec(kind, pattern, lengths, reduction, layer)
    spec.check(probe)
    return spec
