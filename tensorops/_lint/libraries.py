"""Where a library's rules differ from tensorops': einops, and NumPy's, torch's, JAX's einsum.

Every call is planned by tensorops' own planners (`tensorops._lint.planning`): they
find what every library refuses. This module adds what the library refuses and
tensorops accepts, and leaves out calls whose text tensorops reads otherwise:

* einops: no ``+`` (concatenation) and no ``,`` (one array per term) in rearrange,
  reduce and repeat; seven reductions (and ``"rearrange"``, ``"repeat"``);
  einops.einsum needs ``->`` and takes neither compositions nor integers; it reads
  ``_`` as an axis name, which tensorops does not, so such a call is not checked;
  einops.parse_shape names each axis once;
* numpy.einsum and torch.einsum name axes with ASCII letters only;
* jax.numpy.einsum and opt_einsum take any character as an axis: an equation with
  one that is not a letter is not checked.

Each rule is verified against the library itself in ``tests/test_lint_libraries.py``.
"""

from __future__ import annotations

from tensorops._errors import PatternError, TensorOpsError, unknown_option
from tensorops._grammar import Anon, Axis, Group, Skip, items_of, parse_pattern
from tensorops._lint.arguments import StaticCall
from tensorops._types import REDUCTIONS

__all__ = ["EINOPS_REDUCTIONS", "library_error", "reading"]

#: The reductions einops has (``einops.reduce``), besides a function.
EINOPS_REDUCTIONS = ("min", "max", "sum", "mean", "prod", "any", "all")

_SKIP = "skip"


def _at(text: str, symbol: str) -> tuple[int, int]:
    start = text.index(symbol)
    return (start, start + len(symbol))


def _einops_pattern(call: StaticCall) -> tuple[str, TensorOpsError] | None:
    """rearrange, reduce, repeat and their layers, as einops reads them."""
    text = call.pattern
    for symbol, reason, hint in (
        (
            "+",
            "einops does not concatenate: '+' is tensorops syntax",
            "concatenate first (torch.cat, np.concatenate), or call tensorops.rearrange",
        ),
        (
            ",",
            f"{call.target.name} takes one term a side: ',' between terms is tensorops "
            "syntax (one array per term)",
            "separate axes with spaces; for one array per term call tensorops.rearrange",
        ),
    ):
        if symbol in text:
            return "TOP012", PatternError(reason, pattern=text, span=_at(text, symbol), hint=hint)
    reduction = call.reduction
    known = (*EINOPS_REDUCTIONS, "rearrange", "repeat")
    if call.target.op == "reduce" and isinstance(reduction, str) and reduction not in known:
        error = unknown_option("reduction", reduction, EINOPS_REDUCTIONS, "or a function")
        if reduction in REDUCTIONS:
            error.hint = f"{reduction!r} is a reduction of tensorops.reduce"
        return "TOP004", error
    return None


def _einops_einsum(call: StaticCall) -> tuple[str, TensorOpsError] | str | None:
    text = call.pattern
    if "+" in text:
        return "TOP012", PatternError(
            "einops.einsum does not concatenate: '+' is tensorops syntax",
            pattern=text,
            span=_at(text, "+"),
            hint="call tensorops.einsum",
        )
    if "->" not in text:
        end = len(text)
        return "TOP013", PatternError(
            "einops.einsum needs '->' and the output's axes",
            pattern=text,
            span=(end, end + 1),
            hint="e.g. 'b i d, b j d -> b i j'",
        )
    try:
        pattern = parse_pattern(text)
    except TensorOpsError:
        return None  # the planner reports it
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        for element, item in items_of(term):
            if isinstance(item, Skip):
                return _SKIP  # an axis named '_' to einops
            if isinstance(element, Group) or isinstance(item, Anon):
                span = element.span if isinstance(element, Group) else item.span
                return "TOP013", PatternError(
                    f"einops.einsum takes axis names and '...' only, not "
                    f"{text[span[0] : span[1]]!r}",
                    pattern=text,
                    span=span,
                    hint="compose axes with einops.rearrange first, or call tensorops.einsum",
                )
    return None


def _einops_parse_shape(call: StaticCall) -> tuple[str, TensorOpsError] | None:
    """einops.parse_shape names each axis once ('_' aside); tensorops checks equal lengths."""
    text = call.pattern
    try:
        pattern = parse_pattern(text)
    except TensorOpsError:
        return None  # the planner reports it
    seen: set[str] = set()
    for _, item in items_of(pattern.inputs[0]):
        if isinstance(item, Axis):
            if item.name in seen:
                return "TOP003", PatternError(
                    f"axis '{item.name}' appears twice: einops.parse_shape names each axis once",
                    pattern=text,
                    span=item.span,
                    hint="tensorops.parse_shape takes a name twice for axes of equal length",
                )
            seen.add(item.name)
    return None


def _letters(call: StaticCall) -> tuple[str, TensorOpsError] | str | None:
    """NumPy and torch: ASCII letters; JAX and opt_einsum: any symbol (then not checked)."""
    text = call.pattern
    for position, char in enumerate(text):
        if char.isspace() or char in ".,->" or (char.isascii() and char.isalpha()):
            continue
        if call.target.library in ("jax", "opt_einsum"):
            return _SKIP if not char.isalpha() else None
        if not char.isascii():
            return "TOP014", PatternError(
                f"{char!r} is not an ASCII letter: {call.target.name} names axes with a-z and A-Z",
                pattern=text,
                span=(position, position + 1),
                hint="tensorops.einsum and opt_einsum take any letter",
            )
    return None


def library_error(call: StaticCall) -> tuple[str, TensorOpsError] | str | None:
    """(code, error) where the call's library refuses what tensorops accepts.

    "skip" leaves the call unchecked; None has it planned by tensorops' rules.
    """
    library, op = call.target.library, call.target.op
    if library == "einops":
        if op in ("rearrange", "reduce", "repeat"):
            return _einops_pattern(call)
        if op == "einsum":
            return _einops_einsum(call)
        if op == "parse_shape":
            return _einops_parse_shape(call)
        return None
    if library in ("numpy", "torch", "jax", "opt_einsum"):
        return _letters(call)
    return None


def reading(call: StaticCall) -> bool | None:
    """How the call's einsum equation is read: spaced (True), compact (False), by its text."""
    if call.target.library == "einops":
        return True
    if call.target.library == "tensorops":
        first = call.node.args[0] if call.node.args else None
        return None if first is call.pattern_node else True
    return False
