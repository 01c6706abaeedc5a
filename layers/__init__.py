"""Neural-network layers built on the tensorops pattern ops.

The layers live in one module per framework, so importing this package imports
no framework::

    from tensorops.layers.torch import EinMix, Rearrange, Reduce, Repeat
"""

__all__: list[str] = []
