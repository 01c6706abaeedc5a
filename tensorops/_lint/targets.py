"""The functions the linter knows: each pattern function, and the functions that make arrays.

`TARGETS` maps each dotted path (as `tensorops._lint.calls` resolves it) to a
`Target`: the library whose rules apply, the op, the name messages give it and the
form of its arguments (`tensorops._lint.arguments` binds them). `MAKERS` are the
functions whose result has a shape the call spells out (``np.zeros((4, 9))``).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MAKERS", "PATHS", "TARGETS", "Target"]


class Target(NamedTuple):
    """A known pattern function.

    Attributes:
        library: whose rules apply: "tensorops", "einops", "numpy", "torch", "jax"
            or "opt_einsum".
        op: the op that runs: "rearrange", "einsum", ...; a layer runs its op
            (``Rearrange`` runs "rearrange", ``EinMix`` "einmix").
        name: what messages call it: the op for tensorops (as its own messages
            do), the layer's class for a layer, else the library's dotted name.
        form: how the arguments bind (a key of `_BINDERS`).
    """

    library: str
    op: str
    name: str
    form: str


#: tensorops' functions -> how their arguments bind.
_FORMS = {
    "rearrange": "array_pattern",
    "repeat": "array_pattern",
    "reduce": "reduce",
    "einsum": "einsum_any",
    "einsum_path": "shapes_first",
    "einsum_expression": "shapes_first",
    "pack": "pack",
    "unpack": "unpack",
    "parse_shape": "parse_shape",
    **dict.fromkeys(
        ("softmax", "log_softmax", "flip", "roll", "sort", "argsort", "cumsum", "check"),
        "array_pattern",
    ),
    **dict.fromkeys(("get_at", "add", "subtract", "multiply", "divide"), "operands2"),
    **dict.fromkeys(("maximum", "minimum", "logaddexp"), "operands2"),
    **dict.fromkeys(("set_at", "add_at", "where"), "operands3"),
    "elementwise": "elementwise",
}
#: The layers -> (the op each runs, how their arguments bind).
_LAYERS = {
    "Rearrange": ("rearrange", "layer"),
    "Reduce": ("reduce", "layer_reduce"),
    "Repeat": ("repeat", "layer"),
    "Softmax": ("softmax", "layer"),
    "LogSoftmax": ("log_softmax", "layer"),
    "Check": ("check", "layer"),
    "EinMix": ("einmix", "einmix"),
}
_TENSOROPS_FAMILIES = ("torch", "flax", "nnx", "keras", "paddle", "equinox")
_EINOPS_FAMILIES = ("torch", "flax", "keras", "tensorflow", "paddle", "oneflow", "chainer")
_EINSUMS = {
    "numpy.einsum": "numpy",
    "torch.einsum": "torch",
    "torch.functional.einsum": "torch",
    "jax.numpy.einsum": "jax",
    "opt_einsum.contract": "opt_einsum",
    "opt_einsum.contract_path": "opt_einsum",
}


def _targets() -> dict[str, Target]:
    table: dict[str, Target] = {}
    for name, form in _FORMS.items():
        op = "einsum" if name.startswith("einsum") else name
        table[f"tensorops.{name}"] = Target("tensorops", op, name, form)
    for family in _TENSOROPS_FAMILIES:
        for layer, (op, form) in _LAYERS.items():
            table[f"tensorops.layers.{family}.{layer}"] = Target("tensorops", op, layer, form)
    for op in ("rearrange", "repeat", "reduce", "einsum", "pack", "unpack", "parse_shape"):
        forms = {"rearrange": "array_pattern", "repeat": "array_pattern", "einsum": "einsum_last"}
        target = Target("einops", op, f"einops.{op}", forms.get(op, op))
        table[f"einops.{op}"] = target
        table[f"einops.{'packing' if op in ('pack', 'unpack') else 'einops'}.{op}"] = target
    for family in _EINOPS_FAMILIES:
        for layer in ("Rearrange", "Reduce", "EinMix"):
            op, form = _LAYERS[layer]
            table[f"einops.layers.{family}.{layer}"] = Target("einops", op, f"einops {layer}", form)
    for path, library in _EINSUMS.items():
        table[path] = Target(library, "einsum", path, "einsum_first")
    table["opt_einsum.contract_expression"] = Target(
        "opt_einsum", "einsum", "opt_einsum.contract_expression", "shapes_first"
    )
    return table


TARGETS = _targets()

#: Functions whose result has a shape the call spells out: path -> whether the shape is
#: the first argument (a tuple or an int) rather than every positional argument.
MAKERS = {
    "numpy.zeros": True,
    "numpy.ones": True,
    "numpy.empty": True,
    "numpy.full": True,
    "numpy.random.randn": False,
    "numpy.random.rand": False,
    "torch.zeros": False,
    "torch.ones": False,
    "torch.empty": False,
    "torch.randn": False,
    "torch.rand": False,
    "jax.numpy.zeros": True,
    "jax.numpy.ones": True,
    "jax.numpy.empty": True,
}

#: Every path whose calls the linter reads: the pattern functions and the array makers.
PATHS = frozenset(TARGETS) | frozenset(MAKERS)
