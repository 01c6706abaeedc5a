"""The layer-family contract: what every family's layers inherit, and what a family writes.

This module knows no framework. A family (`tensorops.layers.torch`, ``.flax``, ``.nnx``,
``.equinox``, ``.keras``, ``.paddle``) defines each public layer as one of the mixins
below followed by its framework's module class, ``class Rearrange(RearrangeLayer,
_Layer)``, and the mixin does the rest: it takes the constructor's arguments in
einops' spellings (the signatures are written here, once), hands the framework's own
keywords (``_keywords``) to the framework's base class, reads and checks the layer
with the description (`tensorops.layers._description`, `tensorops.layers._einmix`)
into ``_description``, gives the layer its attributes (``pattern``, ``lengths``,
``reduction``, ``weight_shape``, ``bias_shape``, ``fan_in``, ``einsum_pattern``), its
repr (the constructor call) and its docstring (`tensorops.layers._docs`).

A family writes two hooks:

* **Create a parameter**: ``_new_parameter(name, shape, bound, draws)`` on its EinMix,
  returning the framework's parameter drawn uniform in ``(-bound, bound)``. ``draws``
  is the value of the keyword named by ``_draws_with`` (nnx's ``rngs``, Equinox's
  ``key``), or ``None`` where the framework's global generator draws.
* **Apply the description**: the framework's forward pass (``forward``, ``call``,
  ``__call__``) returns ``self._description(x, *parameters)``, where the parameters
  are EinMix's weight and bias as the framework reads them (`Layer._parameter_values`
  gives them as they are stored).

Examples:
    A family on NumPy arrays, with a NumPy generator as its random numbers:

    >>> import numpy as np
    >>> from tensorops.layers._family import EinMixLayer, ReduceLayer
    >>> class _Module:  # the framework's module class
    ...     def __call__(self, x):
    ...         return self._description(x, *self._parameter_values())
    >>> class Reduce(ReduceLayer, _Module):
    ...     pass
    >>> class EinMix(EinMixLayer, _Module):
    ...     _draws_with = "generator"
    ...     def _new_parameter(self, name, shape, bound, draws):
    ...         return draws.uniform(-bound, bound, shape)
    >>> pool = Reduce("b (h 2) -> b h", reduction="max")
    >>> pool, pool(np.arange(8.0).reshape(2, 4))
    (Reduce('b (h 2) -> b h', 'max'), array([[1., 3.],
           [5., 7.]]))
    >>> mix = EinMix("b d -> b e", weight_shape="d e", d=3, e=2,
    ...              generator=np.random.default_rng(0))
    >>> mix, mix.weight.shape, mix(np.ones((4, 3))).shape
    (EinMix('b d -> b e', weight_shape='d e', d=3, e=2), (3, 2), (4, 2))
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, NoReturn, TypeVar, overload

import tensorops as tops

from ._description import LayerSpec, Probe, Reduction, describe, numpy_probe
from ._docs import layer_docstring
from ._einmix import EinMixPlan, describe_einmix

__all__ = [
    "CheckLayer",
    "Description",
    "EinMixLayer",
    "Layer",
    "LogSoftmaxLayer",
    "PatternLayer",
    "RearrangeLayer",
    "ReduceLayer",
    "RepeatLayer",
    "SoftmaxLayer",
    "describe_layer",
]

#: What a layer holds: its description, which runs it.
Description = LayerSpec | EinMixPlan

_T = TypeVar("_T")


def describe_layer(
    kind: str,
    args: tuple[Any, ...],
    lengths: Mapping[str, Any],
    *,
    name: str,
    probe: Probe | None = None,
    parameter_probe: Probe | None = None,
) -> Description:
    """The description of layer `kind`, read from its positional `args` and keywords `lengths`.

    `args` are as the constructor takes them: the pattern (Reduce: and the reduction;
    EinMix: the weight's and the bias's shapes), ``None`` where not given. `lengths`
    is not modified. See `tensorops.layers._description.describe` and
    `tensorops.layers._einmix.describe_einmix`.
    """
    if kind == "EinMix":
        pattern, weight_shape, bias_shape = (*args, None, None, None)[:3]
        return describe_einmix(
            pattern,
            weight_shape,
            bias_shape,
            lengths,
            probe=probe,
            parameter_probe=parameter_probe,
            name=name,
        )
    return describe(kind, args, lengths, probe=probe or numpy_probe, name=name)


class _Described(Generic[_T]):
    """An attribute of a layer: the attribute of the same name of its description.

    Read-only: the description was checked when the layer was built.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __set__(self, layer: Layer, value: object) -> None:
        raise AttributeError(
            f"{self.name!r} is read from the layer's description: build a new layer"
        )

    @overload
    def __get__(self, layer: None, owner: type | None = None) -> _Described[_T]: ...
    @overload
    def __get__(self, layer: Layer, owner: type | None = None) -> _T: ...
    def __get__(self, layer: Layer | None, owner: type | None = None) -> _Described[_T] | _T:
        if layer is None:
            return self
        value: _T = getattr(layer._description, self.name)
        return value


class Layer:
    """What every layer of every family inherits: its description, attributes, repr, docs.

    A family's public class named as its ``kind``, in a module
    ``tensorops.layers.<family>``, gets its docstring made from its own (a summary,
    the family's notes and examples) and the table of `tensorops.layers._docs`.
    """

    #: The layer: ``"Rearrange"``, ``"Reduce"``, ..., ``"EinMix"``.
    kind: ClassVar[str]
    # What a family's base class may set (the mixins come first in a layer's bases, so
    # they leave these unset, and `_read` reads them with their defaults):
    #: The framework's own keywords the constructor takes beside the axis lengths
    #: (Keras' ``name``, ``dtype``, ``trainable``), passed to the framework's class.
    _keywords: ClassVar[tuple[str, ...]]
    #: Make the arrays the build-time check runs on (default: the description's own).
    _probe: ClassVar[Probe | None]
    _parameter_probe: ClassVar[Probe | None]

    #: The layer's description (`Description`); the mixins below narrow the type, and a
    #: family whose modules are dataclasses declares it as a field of its own.
    _description: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        package, _, family = cls.__module__.rpartition(".")
        public = package.endswith("layers") and not family.startswith("_")
        # under ``python -OO`` there is no docstring to complete (a dataclass makes one)
        if public and cls.__name__ == getattr(cls, "kind", None) and sys.flags.optimize < 2:
            cls.__doc__ = layer_docstring(cls.kind, family, cls.__doc__ or "")

    def _read(self, args: tuple[Any, ...], lengths: dict[str, Any]) -> None:
        """Start the framework's class with its keywords; describe the layer with the rest."""
        cls = type(self)
        own = getattr(cls, "_keywords", ())
        keywords = {key: lengths.pop(key) for key in own if key in lengths}
        super().__init__(**keywords)
        self._description = describe_layer(
            self.kind,
            args,
            lengths,
            name=cls.__name__,
            probe=getattr(cls, "_probe", None),
            parameter_probe=getattr(cls, "_parameter_probe", None),
        )

    lengths: _Described[Mapping[str, Any]] = _Described()
    """The axis lengths the layer was built with."""

    def _parameter_values(self) -> tuple[Any, ...]:
        """The layer's parameters as the layer stores them, in the order the description takes."""
        return ()

    def __repr__(self) -> str:
        return repr(self._description)


class PatternLayer(Layer):
    """A layer made of a pattern and axis lengths: Rearrange, Repeat, Softmax, ..."""

    _description: LayerSpec

    def __init__(self, pattern: str | None = None, /, *extra: NoReturn, **lengths: Any) -> None:
        self._read((pattern, *extra), lengths)

    pattern: _Described[str] = _Described()
    """The layer's pattern."""


class ReduceLayer(PatternLayer):
    """`tensorops.reduce` as a layer."""

    kind = "Reduce"

    def __init__(
        self, pattern: str | None = None, reduction: Reduction | None = None, /, **lengths: Any
    ) -> None:
        self._read((pattern, reduction), lengths)

    reduction: _Described[Reduction | None] = _Described()
    """The layer's reduction."""


class EinMixLayer(Layer):
    """A learned einsum; the family draws its parameters (``_new_parameter``)."""

    kind = "EinMix"
    #: The keyword that carries the family's random numbers (nnx's ``rngs``, Equinox's
    #: ``key``), required; ``None``: the framework's global generator draws.
    _draws_with: ClassVar[str | None] = None

    _description: EinMixPlan
    weight: Any
    bias: Any

    def __init__(
        self,
        pattern: str | None = None,
        /,
        weight_shape: str | None = None,
        bias_shape: str | None = None,
        **lengths: Any,
    ) -> None:
        draws = self._take_draws(lengths)
        self._read((pattern, weight_shape, bias_shape), lengths)
        self._create_parameters(draws)

    def _take_draws(self, lengths: dict[str, Any]) -> Any:
        """The value of the keyword ``_draws_with``, taken out of `lengths`."""
        keyword = self._draws_with
        if keyword is None:
            return None
        if keyword not in lengths:
            layer = type(self).__name__
            raise tops.ArgumentError(
                f"missing the argument {keyword!r}",
                op=layer,
                hint=f"it draws the parameters: {layer}(..., {keyword}=...)",
            )
        return lengths.pop(keyword)

    def _create_parameters(self, draws: Any) -> None:
        """Set each parameter, drawn by the family (``None`` where there is no bias)."""
        for name, shape, bound in self._description.parameters:
            value = None if shape is None else self._new_parameter(name, shape, bound, draws)
            setattr(self, name, value)

    def _new_parameter(self, name: str, shape: tuple[int, ...], bound: float, draws: Any) -> Any:
        """The hook: the framework's parameter `name` of `shape`, uniform in ``±bound``."""
        raise NotImplementedError(f"{type(self).__name__} does not create its parameters")

    def _parameter_values(self) -> tuple[Any, ...]:
        return (self.weight, self.bias)

    pattern: _Described[str] = _Described()
    """The layer's pattern."""
    weight_shape: _Described[str] = _Described()
    """The weight's axes."""
    bias_shape: _Described[str | None] = _Described()
    """The bias's axes, or ``None`` for no bias."""
    fan_in: _Described[int] = _Described()
    """The number of input elements each output element mixes."""
    einsum_pattern: _Described[str] = _Described()
    """The einsum of the flat terms, one letter per axis (einops' attribute)."""


# The other pattern layers: each names its op.


class RearrangeLayer(PatternLayer):
    kind = "Rearrange"


class RepeatLayer(PatternLayer):
    kind = "Repeat"


class SoftmaxLayer(PatternLayer):
    kind = "Softmax"


class LogSoftmaxLayer(PatternLayer):
    kind = "LogSoftmax"


class CheckLayer(PatternLayer):
    kind = "Check"
