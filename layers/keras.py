"""Keras 3 layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

One implementation serves every Keras backend (JAX, PyTorch, TensorFlow): ``call``
hands the backend's tensors to the tensorops functions, which run them with that
framework's own calls, under ``jit_compile`` as well. The constructors take the
arguments of `tensorops.layers.torch` (einops' spellings ``pattern=`` and
``reduction=`` included) plus Keras' own keywords ``name``, ``dtype`` and
``trainable``, which are therefore not axis names here. A bad pattern fails when
the layer is built, with a `tensorops.TensorOpsError`.

The layers are registered with ``keras.saving`` (package ``"tensorops"``), so a
model that holds them saves to a ``.keras`` file and loads without
``custom_objects``. A callable reduction is saved by name: register it with
``keras.saving.register_keras_serializable`` for the model to load.

Pattern layers keep their input's dtype (they do not cast to the layer's
compute dtype); EinMix computes in the layer's dtype policy, as ``Dense`` does.

Examples:
    >>> import keras, numpy as np
    >>> from tensorops.layers.keras import EinMix, Rearrange, Reduce
    >>> model = keras.Sequential([
    ...     keras.Input((3, 32, 32)),
    ...     Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4),
    ...     EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out", bias_shape="d_out",
    ...            d_in=48, d_out=64),
    ...     Reduce("b n d -> b d", "mean"),
    ... ])
    >>> model.output_shape
    (None, 64)
    >>> tuple(model(np.zeros((2, 3, 32, 32), "float32")).shape)
    (2, 64)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import keras

import tensorops as tops
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, parse_concat

# relative: this directory is installed as tensorops.layers
from ._description import EinMixPlan, LayerSpec, Reduction, describe, describe_einmix

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]

_PACKAGE = "tensorops"

#: Keras raises an exception with this attribute as it is (see `_passing_through`).
_KERAS_MARK = "_keras_call_info_injected"

#: The keywords `keras.layers.Layer` takes from a layer's config; the rest are axis lengths.
_KERAS_KEYWORDS = ("name", "dtype", "trainable")


def _keras_keywords(lengths: dict[str, Any]) -> dict[str, Any]:
    """Take Keras' own keywords out of `lengths`."""
    return {key: lengths.pop(key) for key in _KERAS_KEYWORDS if key in lengths}


def _passing_through(error: tops.TensorOpsError) -> tops.TensorOpsError:
    """`error`, marked so that Keras raises it as it is.

    Keras rebuilds an exception raised in ``call`` from its first argument, with
    the layer's arguments appended (``inject_argument_info_in_traceback`` in
    ``keras/src/utils/traceback_utils.py``), which would drop the pattern, the
    caret and the shapes of tensorops' message. It leaves alone an exception that
    carries this mark: it is how Keras skips the outer layers of nested calls.
    """
    setattr(error, _KERAS_MARK, True)
    return error


def _raised_by_call(error: BaseException) -> BaseException:
    """The error that left ``call``, which `error` may have been rebuilt from.

    Keras' shape inference rebuilds an error from its text, "Could not automatically
    infer the output shape ..." (``Operation.compute_output_spec``), inside the
    ``except`` that caught it: the original is the new error's context.
    """
    cause: BaseException | None = error
    while cause is not None:
        if getattr(cause, _KERAS_MARK, False):
            return cause
        cause = cause.__context__
    return error


def _stand_in_size(element: Any, unknown: int, lengths: Mapping[str, Any]) -> int:
    """The length of one dimension of a pattern: known lengths, `unknown` for the rest."""
    if element is None:  # under '...'
        return unknown
    if isinstance(element, Group) and element.parts:  # a concatenation (a + b)
        return sum(_composed_size(part, unknown, lengths) for part in element.parts)
    items = element.items if isinstance(element, Group) else (element,)
    return _composed_size(items, unknown, lengths)


def _composed_size(items: tuple[Any, ...], unknown: int, lengths: Mapping[str, Any]) -> int:
    size, missing = 1, False
    for item in items:
        if isinstance(item, Anon):
            size *= item.length
        elif isinstance(item, Axis) and type(lengths.get(item.name)) is int:
            size *= lengths[item.name]
        else:  # an axis of unknown length, or '...'
            missing = True
    return size * unknown if missing else size


def stand_in_shape(
    pattern: str, lengths: Mapping[str, Any], shape: tuple[int | None, ...], unknown: int
) -> tuple[int, ...]:
    """`shape` with each unknown (``None``) dimension replaced by a length that fits `pattern`.

    A dimension made of axes of known lengths gets their product; one with an axis
    of unknown length gets the known part times `unknown`; one under ``...``
    gets `unknown`. Shapes made with two values of `unknown` show which output
    dimensions depend on the unknown ones.
    """
    try:
        term = parse_concat(pattern).inputs[0]
    except tops.TensorOpsError:  # the op reports it on any stand-in
        return tuple(unknown if size is None else size for size in shape)
    # One entry per dimension: its element of the pattern, or None under '...'.
    elements: list[Any] = [
        inner
        for element in term.elements
        for inner in (element.elements if isinstance(element, Bracket) else (element,))
    ]
    dots = [i for i, element in enumerate(elements) if isinstance(element, Dots)]
    if len(dots) == 1:
        elements[dots[0] : dots[0] + 1] = [None] * max(len(shape) - len(elements) + 1, 0)
    if len(elements) != len(shape):  # a wrong rank: the op reports it on any stand-in
        elements = [None] * len(shape)
    return tuple(
        size if size is not None else _stand_in_size(element, unknown, lengths)
        for size, element in zip(shape, elements, strict=True)
    )


class _Layer(keras.layers.Layer):
    """What the layers share: the output spec for unknown dimensions, the repr, the call."""

    def _pattern_and_lengths(self) -> tuple[str, Mapping[str, Any]]:
        raise NotImplementedError

    def _run(self, x: Any) -> Any:
        raise NotImplementedError

    def call(self, x: Any) -> Any:
        """The layer's op on `x`, a tensor of the Keras backend."""
        try:
            return self._run(x)
        except tops.TensorOpsError as error:
            raise _passing_through(error) from None

    def compute_output_spec(self, x: Any) -> Any:
        """The output's shape and dtype, ``None`` where it depends on an unknown input dimension.

        Keras' own inference runs ``call`` on the backend's symbolic tensors, whose
        unknown dimensions are symbols (JAX) or fixed stand-ins (83 and 89 on torch)
        that a pattern may not fit (``(h 2)`` needs an even length). Here the
        stand-ins fit the pattern, and ``call`` runs twice on them when a dimension
        is unknown: the output dimensions that differ are the unknown ones.
        """
        pattern, lengths = self._pattern_and_lengths()
        shape = tuple(x.shape)
        outputs = [
            self._spec_of(keras.KerasTensor(stand_in_shape(pattern, lengths, shape, n), x.dtype))
            for n in ((2, 3) if None in shape else (1,))
        ]
        first = outputs[0]
        dims = tuple(
            a if all(out.shape[i] == a for out in outputs) else None
            for i, a in enumerate(first.shape)
        )
        return keras.KerasTensor(dims, first.dtype)

    def _spec_of(self, x: Any) -> Any:
        """Keras' own inference (``call`` on the backend's symbolic tensors) on `x`."""
        try:
            return keras.Operation.compute_output_spec(self, x)
        except tops.TensorOpsError as error:
            raise _raised_by_call(error) from None

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
        """The output's shape for an input of `input_shape` (``None``: unknown)."""
        spec = self.compute_output_spec(keras.KerasTensor(input_shape, self.compute_dtype))
        return tuple(spec.shape)


class _PatternLayer(_Layer):
    """A layer made of a `LayerSpec`: a pattern, axis lengths (and Reduce's reduction)."""

    _LAYER: ClassVar[str]

    def __init__(self, pattern: str | None = None, /, *extra: Any, **lengths: Any) -> None:
        keywords = _keras_keywords(lengths)
        # The layer computes in its input's dtype, as the function does.
        super().__init__(autocast=False, **keywords)
        self.spec: LayerSpec = describe(
            self._LAYER, (pattern, *extra), lengths, name=type(self).__name__
        )

    def _pattern_and_lengths(self) -> tuple[str, Mapping[str, Any]]:
        return self.spec.pattern, self.spec.lengths

    def _run(self, x: Any) -> Any:
        return self.spec(x)

    def get_config(self) -> dict[str, Any]:
        """The arguments that build the layer again (with Keras' name, dtype, trainable)."""
        return {
            **super().get_config(),
            "pattern": self.spec.pattern,
            "lengths": dict(self.spec.lengths),
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> _PatternLayer:
        """The layer `get_config` describes."""
        config = dict(config)
        pattern, lengths = config.pop("pattern"), config.pop("lengths", {})
        return cls(pattern, **lengths, **config)

    def __repr__(self) -> str:
        return repr(self.spec)


@keras.saving.register_keras_serializable(_PACKAGE)
class Rearrange(_PatternLayer):
    """`tensorops.rearrange` as a Keras layer.

    Args:
        pattern: ``"left -> right"``, e.g. ``"b h w c -> b c h w"``; ``...`` stands
            for any number of axes.
        **lengths: lengths of axes that cannot be inferred from the input shape
            (and Keras' ``name``, ``dtype``, ``trainable``).

    Raises:
        TensorOpsError: when built, if the pattern is malformed or the lengths do
            not fit it; when called, if the input does not fit the pattern.

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import Rearrange
        >>> layer = Rearrange("b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=4, p2=4)
        >>> layer
        Rearrange('b (h p1) (w p2) c -> b (h w) (p1 p2 c)', p1=4, p2=4)
        >>> tuple(layer(np.zeros((2, 32, 32, 3), "float32")).shape)
        (2, 64, 48)
    """

    _LAYER = "Rearrange"


@keras.saving.register_keras_serializable(_PACKAGE)
class Reduce(_PatternLayer):
    """`tensorops.reduce` as a Keras layer.

    Args:
        pattern: e.g. ``"b (h 2) (w 2) c -> b h w c"``; axes missing on the right
            are reduced.
        reduction: a name of `tensorops.reduce` (``"sum"``, ``"mean"``, ``"max"``,
            ``"argmax"``, ``"logsumexp"``, ...), or a callable ``f(x, axes)`` on the
            backend's tensors (``keras.ops`` functions work on every backend).
            Positional, or the keyword ``reduction=`` as in einops.
        **lengths: lengths of axes that cannot be inferred from the input shape
            (and Keras' ``name``, ``dtype``, ``trainable``).

    Raises:
        TensorOpsError: when built, if the pattern, the reduction or the lengths
            are invalid; when called, if the input does not fit the pattern.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> from tensorops.layers.keras import Reduce
        >>> pool = Reduce("b (h 2) (w 2) c -> b h w c", "max")
        >>> pool
        Reduce('b (h 2) (w 2) c -> b h w c', 'max')
        >>> x = np.arange(16.0, dtype="float32").reshape(1, 4, 4, 1)
        >>> tops.asnumpy(pool(x))[0, ..., 0]
        array([[ 5.,  7.],
               [13., 15.]], dtype=float32)
    """

    _LAYER = "Reduce"

    def __init__(
        self, pattern: str | None = None, reduction: Reduction | None = None, /, **lengths: Any
    ) -> None:
        super().__init__(pattern, reduction, **lengths)

    def get_config(self) -> dict[str, Any]:
        """The arguments that build the layer again; a callable reduction by its Keras name."""
        reduction: Reduction | None = self.spec.reduction
        serialized = (
            keras.saving.serialize_keras_object(reduction) if callable(reduction) else reduction
        )
        return {**super().get_config(), "reduction": serialized}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Reduce:
        """The layer `get_config` describes."""
        config = dict(config)
        pattern, lengths = config.pop("pattern"), config.pop("lengths", {})
        reduction = config.pop("reduction")
        if isinstance(reduction, dict):
            reduction = keras.saving.deserialize_keras_object(reduction)
        return cls(pattern, reduction, **lengths, **config)


@keras.saving.register_keras_serializable(_PACKAGE)
class Repeat(_PatternLayer):
    """`tensorops.repeat` as a Keras layer.

    Args:
        pattern: e.g. ``"b h w -> b h w c"``; every axis new on the right needs a
            length, as a keyword or an integer literal.
        **lengths: lengths of new axes and of axes that cannot be inferred (and
            Keras' ``name``, ``dtype``, ``trainable``).

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import Repeat
        >>> tuple(Repeat("b h w -> b h w c", c=3)(np.zeros((2, 4, 4), "float32")).shape)
        (2, 4, 4, 3)
    """

    _LAYER = "Repeat"


@keras.saving.register_keras_serializable(_PACKAGE)
class Softmax(_PatternLayer):
    """`tensorops.softmax` as a Keras layer: normalize along the bracketed axes.

    Args:
        pattern: the input's axes, those to normalize in brackets, e.g.
            ``"b h i [j]"``; several are normalized jointly; ``-> ...`` rearranges
            the result.
        **lengths: lengths of axes that cannot be inferred (and Keras' ``name``,
            ``dtype``, ``trainable``).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> from tensorops.layers.keras import Softmax
        >>> tops.asnumpy(Softmax("b [j]")(np.zeros((1, 4), "float32")))
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """

    _LAYER = "Softmax"


@keras.saving.register_keras_serializable(_PACKAGE)
class LogSoftmax(_PatternLayer):
    """`tensorops.log_softmax` as a Keras layer.

    Args:
        pattern: the input's axes, those to normalize in brackets, e.g. ``"b [c]"``.
        **lengths: lengths of axes that cannot be inferred (and Keras' ``name``,
            ``dtype``, ``trainable``).

    Examples:
        >>> import keras, numpy as np, tensorops as tops
        >>> from tensorops.layers.keras import LogSoftmax
        >>> x = LogSoftmax("b [c]")(np.zeros((1, 4), "float32"))
        >>> tops.asnumpy(keras.ops.exp(x))
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """

    _LAYER = "LogSoftmax"


@keras.saving.register_keras_serializable(_PACKAGE)
class Check(_PatternLayer):
    """`tensorops.check` as a Keras layer: returns its input, once its shape is checked.

    Args:
        pattern: the input's axes, e.g. ``"b h w c"``, as in `tensorops.check`.
        **lengths: the lengths the axes must have, e.g. ``c=3`` (and Keras'
            ``name``, ``dtype``, ``trainable``).

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import Check
        >>> tuple(Check("b h w c", c=3)(np.zeros((2, 4, 4, 3), "float32")).shape)
        (2, 4, 4, 3)
    """

    _LAYER = "Check"


@keras.saving.register_keras_serializable(_PACKAGE)
class EinMix(_Layer):
    """A learned einsum: the input is mixed with a weight whose axes a pattern names.

    The arguments, shapes and semantics are those of `tensorops.layers.torch.EinMix`
    (and einops'): ``EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out",
    bias_shape="d_out", d_in=48, d_out=64)`` is a ``Dense`` layer over the last
    axis. The weight is drawn uniform in ``±sqrt(3/fan_in)``, then the bias in
    ``±1/sqrt(fan_in)``, by Keras initializers: ``keras.utils.set_random_seed``
    makes them reproducible. The parameters are created with the layer.

    Args:
        pattern: ``"left -> right"``: the input's axes and the output's.
        weight_shape: the weight's axes, names separated by spaces.
        bias_shape: the bias's axes, a subset of the output's, or ``None``.
        **lengths: the lengths of the weight and bias axes, and of input axes that
            cannot be inferred (and Keras' ``name``, ``dtype``, ``trainable``).

    Raises:
        TensorOpsError: when built, if the patterns do not fit together or a
            length is missing; when called, if the input does not fit.

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import EinMix
        >>> mix = EinMix("b n (h c) -> b h n e", weight_shape="h c e", h=4, c=16, e=8)
        >>> mix
        EinMix('b n (h c) -> b h n e', weight_shape='h c e', h=4, c=16, e=8)
        >>> tuple(mix.weight.shape), tuple(mix(np.zeros((2, 10, 64), "float32")).shape)
        ((4, 16, 8), (2, 4, 10, 8))
    """

    def __init__(
        self,
        pattern: str | None = None,
        /,
        weight_shape: str | None = None,
        bias_shape: str | None = None,
        **lengths: Any,
    ) -> None:
        keywords = _keras_keywords(lengths)
        super().__init__(**keywords)
        self.plan: EinMixPlan = describe_einmix(
            pattern, weight_shape, bias_shape, lengths, name=type(self).__name__
        )
        self.build()

    def build(self, input_shape: Any = None) -> None:
        """Create the weight, then the bias (the order of einops' draws); once."""
        if getattr(self, "weight", None) is not None:
            return  # made with the layer; Keras builds again when it loads a model
        plan = self.plan
        self.weight = self.add_weight(
            shape=plan.weight_dims,
            initializer=keras.initializers.RandomUniform(-plan.weight_bound, plan.weight_bound),
            name="weight",
        )
        self.bias = None
        if plan.bias_dims is not None:
            self.bias = self.add_weight(
                shape=plan.bias_dims,
                initializer=keras.initializers.RandomUniform(-plan.bias_bound, plan.bias_bound),
                name="bias",
            )

    def _pattern_and_lengths(self) -> tuple[str, Mapping[str, Any]]:
        return self.plan.pattern, self.plan.lengths

    def _run(self, x: Any) -> Any:
        # The variables' backend values (cast to the compute dtype inside the call, and
        # the traced values inside JAX's stateless calls); `convert_to_tensor` would
        # hand back the Keras variable itself on TensorFlow.
        weight = self.weight.value
        bias = None if self.bias is None else self.bias.value
        return self.plan.mix(x, weight, bias)

    def get_config(self) -> dict[str, Any]:
        """The arguments that build the layer again (with Keras' name, dtype, trainable)."""
        plan = self.plan
        return {
            **super().get_config(),
            "pattern": plan.pattern,
            "weight_shape": plan.weight_shape,
            "bias_shape": plan.bias_shape,
            "lengths": dict(plan.lengths),
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> EinMix:
        """The layer `get_config` describes (with fresh parameters, as Keras expects)."""
        config = dict(config)
        pattern, lengths = config.pop("pattern"), config.pop("lengths", {})
        return cls(pattern, **lengths, **config)

    @property
    def einsum_pattern(self) -> str:
        """The einsum of the flat terms, one letter per axis (einops' attribute)."""
        return self.plan.einsum_pattern

    def __repr__(self) -> str:
        return repr(self.plan)
