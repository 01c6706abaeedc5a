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

from typing import Any, ClassVar

import keras

import tensorops as tops

# relative: this directory is installed as tensorops.layers
from . import _family
from ._description import fitting_shape

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]

_PACKAGE = "tensorops"

#: Keras raises an exception with this attribute as it is (see `_passing_through`).
_KERAS_MARK = "_keras_call_info_injected"


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


class _Layer(keras.layers.Layer):
    """A Keras layer: its call, output spec and config, from its description.

    See `tensorops.layers._family`.
    """

    _keywords: ClassVar[tuple[str, ...]] = ("name", "dtype", "trainable")

    def __init__(self, **keywords: Any) -> None:
        # A pattern layer computes in its input's dtype, as the function does; EinMix in
        # the layer's dtype policy, as Dense does.
        super().__init__(autocast=self.kind == "EinMix", **keywords)

    def call(self, x: Any) -> Any:
        """The layer's op on `x`, a tensor of the Keras backend."""
        # The variables' backend values (cast to the compute dtype inside the call, and
        # the traced values inside JAX's stateless calls); `convert_to_tensor` would
        # hand back the Keras variable itself on TensorFlow.
        values = [None if p is None else p.value for p in self._parameter_values()]
        try:
            return self._description(x, *values)
        except tops.TensorOpsError as error:
            raise _passing_through(error) from None

    def compute_output_spec(self, x: Any) -> Any:
        """The output's shape and dtype, ``None`` where it depends on an unknown input dimension.

        Keras' own inference runs ``call`` on the backend's symbolic tensors, whose
        unknown dimensions are symbols (JAX) or fixed stand-ins (83 and 89 on torch)
        that a pattern may not fit (``(h 2)`` needs an even length). Here the
        stand-ins fit the pattern (`fitting_shape`), and ``call`` runs twice on them
        when a dimension is unknown: the output dimensions that differ are the
        unknown ones.
        """
        description, shape = self._description, tuple(x.shape)
        outputs = [
            self._spec_of(
                keras.KerasTensor(
                    fitting_shape(description.pattern, description.lengths, shape, n), x.dtype
                )
            )
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

    def get_config(self) -> dict[str, Any]:
        """The arguments that build the layer again (with Keras' name, dtype, trainable).

        A callable reduction is saved by its Keras name.
        """
        arguments = self._description.arguments
        if callable(arguments.get("reduction")):
            arguments["reduction"] = keras.saving.serialize_keras_object(arguments["reduction"])
        lengths = dict(self._description.lengths)
        return {**super().get_config(), **arguments, "lengths": lengths}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        """The layer `get_config` describes (EinMix: with fresh parameters, as Keras expects)."""
        config = dict(config)
        args, lengths = [config.pop("pattern")], config.pop("lengths", {})
        if "reduction" in config:
            reduction = config.pop("reduction")
            if isinstance(reduction, dict):
                reduction = keras.saving.deserialize_keras_object(reduction)
            args.append(reduction)
        return cls(*args, **lengths, **config)


@keras.saving.register_keras_serializable(_PACKAGE)
class Rearrange(_family.RearrangeLayer, _Layer):
    """`tensorops.rearrange` as a Keras layer.

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import Rearrange
        >>> layer = Rearrange("b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=4, p2=4)
        >>> layer
        Rearrange('b (h p1) (w p2) c -> b (h w) (p1 p2 c)', p1=4, p2=4)
        >>> tuple(layer(np.zeros((2, 32, 32, 3), "float32")).shape)
        (2, 64, 48)
    """


@keras.saving.register_keras_serializable(_PACKAGE)
class Reduce(_family.ReduceLayer, _Layer):
    """`tensorops.reduce` as a Keras layer.

    A callable reduction takes the backend's tensors (``keras.ops`` functions work on
    every backend); register it with ``keras.saving.register_keras_serializable``
    for a model that holds the layer to load.

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


@keras.saving.register_keras_serializable(_PACKAGE)
class Repeat(_family.RepeatLayer, _Layer):
    """`tensorops.repeat` as a Keras layer.

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import Repeat
        >>> tuple(Repeat("b h w -> b h w c", c=3)(np.zeros((2, 4, 4), "float32")).shape)
        (2, 4, 4, 3)
    """


@keras.saving.register_keras_serializable(_PACKAGE)
class Softmax(_family.SoftmaxLayer, _Layer):
    """`tensorops.softmax` as a Keras layer: normalize along the bracketed axes.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> from tensorops.layers.keras import Softmax
        >>> tops.asnumpy(Softmax("b [j]")(np.zeros((1, 4), "float32")))
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """


@keras.saving.register_keras_serializable(_PACKAGE)
class LogSoftmax(_family.LogSoftmaxLayer, _Layer):
    """`tensorops.log_softmax` as a Keras layer.

    Examples:
        >>> import keras, numpy as np, tensorops as tops
        >>> from tensorops.layers.keras import LogSoftmax
        >>> x = LogSoftmax("b [c]")(np.zeros((1, 4), "float32"))
        >>> tops.asnumpy(keras.ops.exp(x))
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """


@keras.saving.register_keras_serializable(_PACKAGE)
class Check(_family.CheckLayer, _Layer):
    """`tensorops.check` as a Keras layer: returns its input, once its shape is checked.

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import Check
        >>> tuple(Check("b h w c", c=3)(np.zeros((2, 4, 4, 3), "float32")).shape)
        (2, 4, 4, 3)
    """


@keras.saving.register_keras_serializable(_PACKAGE)
class EinMix(_family.EinMixLayer, _Layer):
    """A learned einsum, as a Keras layer (a ``Dense`` layer where it mixes the last axis).

    Keras initializers draw the parameters, when the layer is created:
    ``keras.utils.set_random_seed`` makes them reproducible.

    Examples:
        >>> import numpy as np
        >>> from tensorops.layers.keras import EinMix
        >>> mix = EinMix("b n (h c) -> b h n e", weight_shape="h c e", h=4, c=16, e=8)
        >>> mix
        EinMix('b n (h c) -> b h n e', weight_shape='h c e', h=4, c=16, e=8)
        >>> tuple(mix.weight.shape), tuple(mix(np.zeros((2, 10, 64), "float32")).shape)
        ((4, 16, 8), (2, 4, 10, 8))
    """

    def _create_parameters(self, draws: None) -> None:
        self.build()  # in the layer's name scope, and the layer is built

    def build(self, input_shape: Any = None) -> None:
        """Create the weight, then the bias (the order of einops' draws); once."""
        if getattr(self, "weight", None) is None:  # Keras builds again when it loads a model
            super()._create_parameters(None)

    def _new_parameter(self, name: str, shape: tuple[int, ...], bound: float, draws: None) -> Any:
        initializer = keras.initializers.RandomUniform(-bound, bound)
        return self.add_weight(shape=shape, initializer=initializer, name=name)
