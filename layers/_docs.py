r"""The documentation of every layer, once: what each does, its arguments, what it raises.

A family's class keeps only what is its own: a summary line, notes on the family, and
its ``Examples:``. `layer_docstring` makes the class docstring from that and this
table: the summary, the table's description of the layer, the family's notes, the
arguments and errors from the table, then the examples. The families' classes get
theirs when they are defined (`tensorops.layers._family.Layer`); the API page gets the
same text from ``scripts/docstrings.py``, a Griffe extension that calls this function
on the source.

Examples:
    >>> from tensorops.layers._docs import layer_docstring
    >>> own = "`tensorops.repeat` as a layer.\n\nExamples:\n    (the family's own)\n"
    >>> print(layer_docstring("Repeat", "torch", own))
    `tensorops.repeat` as a layer.
    <BLANKLINE>
    Args:
        pattern: e.g. ``"b h w -> b h w c"``; every axis new on the right needs a length,
            as a keyword or an integer literal.
        **lengths: lengths of new axes and of axes that cannot be inferred.
    <BLANKLINE>
    Raises:
        TensorOpsError: when built, if the pattern is malformed or a new axis has no
            length; when called, if the input does not fit the pattern.
    <BLANKLINE>
    Examples:
        (the family's own)
    <BLANKLINE>
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass

__all__ = ["FAMILIES", "LAYERS", "FamilyDocs", "LayerDocs", "layer_docstring"]


@dataclass(frozen=True)
class LayerDocs:
    """What one layer is, in every family.

    Attributes:
        description: paragraphs after the summary line ("" for none).
        arguments: ``(name, text)`` of each constructor argument, in order.
        raises: ``(exception, text)`` of each error.
    """

    description: str
    arguments: tuple[tuple[str, str], ...]
    raises: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class FamilyDocs:
    """How a family's constructors differ in what they take.

    Attributes:
        section: ``"Args"``, or ``"Attributes"`` where the arguments are the module's
            fields (Flax linen: its dataclass ``__init__`` is made at run time).
        lengths: the name the axis lengths go by.
        lengths_note: what the family adds to the lengths' description.
    """

    section: str = "Args"
    lengths: str = "**lengths"
    lengths_note: str = ""


_LENGTHS = "lengths of axes that cannot be inferred from the input shape."
_BRACKETS = "the input's axes, those to normalize in brackets"
_WHEN_CALLED = "when called, if the input does not fit the pattern."

LAYERS: dict[str, LayerDocs] = {
    "Rearrange": LayerDocs(
        "",
        (
            (
                "pattern",
                '``"left -> right"``, e.g. ``"b c h w -> b h w c"``; ``...`` stands for any '
                "number of axes.",
            ),
            ("**lengths", _LENGTHS),
        ),
        (
            (
                "TensorOpsError",
                "when built, if the pattern is malformed or the lengths do not fit it; when "
                "called, if the input does not fit the pattern (the wrong rank, an axis that "
                "does not divide).",
            ),
        ),
    ),
    "Reduce": LayerDocs(
        "",
        (
            (
                "pattern",
                'e.g. ``"b c (h 2) (w 2) -> b c h w"``; axes missing on the right are reduced.',
            ),
            (
                "reduction",
                '``"sum"``, ``"mean"``, ``"max"``, ``"min"``, ``"prod"``, ``"any"``, ``"all"``, '
                '``"argmax"``, ``"argmin"``, ``"logsumexp"``, ``"var"``, ``"std"``, '
                '``"rearrange"`` (no reduction) or ``"repeat"`` (the axes new on the right are '
                "repeated, as in einops), or a callable ``f(x, axes)`` reducing the tuple of "
                "dims ``axes`` of ``x`` and dropping them. Positional, or the keyword "
                "``reduction=`` as in einops.",
            ),
            ("**lengths", _LENGTHS),
        ),
        (
            (
                "TensorOpsError",
                "when built, if the pattern, the reduction or the lengths are invalid; "
                + _WHEN_CALLED,
            ),
        ),
    ),
    "Repeat": LayerDocs(
        "",
        (
            (
                "pattern",
                'e.g. ``"b h w -> b h w c"``; every axis new on the right needs a length, as a '
                "keyword or an integer literal.",
            ),
            ("**lengths", "lengths of new axes and of axes that cannot be inferred."),
        ),
        (
            (
                "TensorOpsError",
                "when built, if the pattern is malformed or a new axis has no length; "
                + _WHEN_CALLED,
            ),
        ),
    ),
    "Softmax": LayerDocs(
        "",
        (
            (
                "pattern",
                f'{_BRACKETS}, e.g. ``"b h i [j]"`` (attention weights); several are normalized '
                "jointly; ``-> ...`` rearranges the result.",
            ),
            ("**lengths", _LENGTHS),
        ),
        (
            (
                "TensorOpsError",
                "when built, if the pattern is malformed or marks no axis; " + _WHEN_CALLED,
            ),
        ),
    ),
    "LogSoftmax": LayerDocs(
        "",
        (("pattern", f'{_BRACKETS}, e.g. ``"b [c]"``.'), ("**lengths", _LENGTHS)),
        (
            (
                "TensorOpsError",
                "when built, if the pattern is malformed or marks no axis; " + _WHEN_CALLED,
            ),
        ),
    ),
    "Check": LayerDocs(
        "",
        (
            (
                "pattern",
                'the input\'s axes, e.g. ``"b c h w"``; integers, ``_``, ``...`` and groups '
                "``(h w)`` as in `tensorops.check`.",
            ),
            ("**lengths", "the lengths the axes must have, e.g. ``c=3``."),
        ),
        (
            (
                "TensorOpsError",
                "when built, if the pattern is malformed; when called, if the input's shape "
                "does not fit (unless ``tops.config.checks`` is off).",
            ),
        ),
    ),
    "EinMix": LayerDocs(
        """\
``EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out", bias_shape="d_out",
d_in=48, d_out=64)`` is a linear layer over the last axis; any axes may be
mixed, and the weight may carry axes of the output that are not mixed (one
linear map per head, per group, ...). Axes composed in the pattern are split
or merged around the einsum, so ``"b (h w) c -> b h w c2"`` works as it reads.

The parameters are initialized as einops' torch EinMix initializes them: the
weight uniform in ``(-sqrt(3/fan_in), sqrt(3/fan_in))``, then the bias uniform in
``(-1/sqrt(fan_in), 1/sqrt(fan_in))``, where ``fan_in`` is the product of the
lengths of the weight axes that are summed over (those absent from the output).
They have einops' shapes, the weight in the order of ``weight_shape`` and the
bias broadcastable against the output: einops' checkpoints load, in the families
it has.""",
        (
            (
                "pattern",
                "``\"left -> right\"``: the input's axes and the output's. ``...`` stands for "
                "any number of axes and must appear on both sides.",
            ),
            (
                "weight_shape",
                "the weight's axes, names separated by spaces; each must appear on a side of "
                "`pattern` and have a length in `lengths`.",
            ),
            (
                "bias_shape",
                "the bias's axes, a subset of the output's, or ``None`` for no bias. Every "
                "bias axis needs a length in `lengths`.",
            ),
            (
                "**lengths",
                "the lengths of the weight and bias axes, and of input axes that cannot be "
                "inferred (composed axes).",
            ),
        ),
        (
            (
                "TensorOpsError",
                "when built, if the patterns do not fit together or a length is missing; when "
                "called, if the input does not fit.",
            ),
        ),
    ),
}

FAMILIES: dict[str, FamilyDocs] = {
    "torch": FamilyDocs(),
    "paddle": FamilyDocs(),
    "nnx": FamilyDocs(),
    "equinox": FamilyDocs(),
    "keras": FamilyDocs(lengths_note=" Also Keras' own ``name``, ``dtype`` and ``trainable``."),
    "flax": FamilyDocs(
        "Attributes",
        "sizes",
        " Given as keywords (``h=4``), or as einops' dict ``sizes``: positional after the "
        "last other argument, or the keyword ``sizes=``.",
    ),
}

_INDENT = " " * 4


def layer_docstring(kind: str, family: str, own: str) -> str:
    """The docstring of `family`'s layer `kind`, from its own docstring `own` and the table.

    `own` is a summary line, perhaps paragraphs of the family's notes, then an
    ``Examples:`` section; the table's description goes after the summary, its
    arguments and errors before the examples.

    Raises:
        ValueError: `own` has no ``Examples:`` section.
    """
    own = inspect.cleandoc(own)
    head, found, examples = own.partition("\nExamples:\n")
    if not found:
        raise ValueError(f"the docstring of {family}'s {kind} has no 'Examples:' section")
    summary, _, notes = head.partition("\n\n")
    layer, way = LAYERS[kind], FAMILIES[family]
    arguments = [
        (way.lengths, text + way.lengths_note) if name == "**lengths" else (name, text)
        for name, text in layer.arguments
    ]
    parts = [summary.strip(), layer.description, notes.strip()]
    parts.append(_section(way.section, arguments))
    parts.append(_section("Raises", layer.raises))
    parts.append("Examples:\n" + examples.rstrip())
    return "\n\n".join(part for part in parts if part) + "\n"


def _section(title: str, entries: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    """A Google-style section: each entry's text wrapped under its name."""
    lines = [f"{title}:"]
    for name, text in entries:
        lines += textwrap.wrap(
            f"{name}: {text}",
            88,
            initial_indent=_INDENT,
            subsequent_indent=_INDENT * 2,
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(lines)
