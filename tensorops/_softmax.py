"""softmax and log_softmax along the bracketed axes of a pattern, on `tensorops._dispatch`.

Each op is its `Op` and a public function that hands the
call to `call`; the pattern is planned by
`tensorops._marked.plan_marked` and the adapter makes the framework call
(``torch.softmax`` itself on torch).
"""

from __future__ import annotations

from typing import Any, TypeVar

from tensorops._dispatch import Lengths, Op, Planner, call
from tensorops._marked import plan_marked
from tensorops._types import Backend, Executor

__all__ = ["LOG_SOFTMAX", "SOFTMAX", "log_softmax", "softmax"]

ArrayT = TypeVar("ArrayT")


def _planner(name: str, log: bool) -> Planner:
    def plan(
        pattern: str, shape: Any, lengths: Lengths, variant: Any, backend: Backend
    ) -> Executor:
        axes, output = plan_marked(name, pattern, shape, lengths)
        run = backend.softmaxer(axes, log)
        if output is None:
            return run
        then = output.executor(backend)
        return lambda x, arg: then(run(x, arg), None)

    return plan


SOFTMAX = Op("softmax", _planner("softmax", False), "softmax(x, 'b h i [j]')")
LOG_SOFTMAX = Op("log_softmax", _planner("log_softmax", True), "log_softmax(x, 'b [c]')")


def softmax(x: ArrayT, pattern: str, /, **lengths: int) -> ArrayT:
    """Normalize along the bracketed axes: ``exp(x) / sum(exp(x))`` over them, jointly.

    The maximum is subtracted first, so values of magnitude 1000 and more give exact
    results rather than ``inf`` / ``nan``. The dtype follows the framework: floating
    input keeps its dtype; NumPy turns integers into float64, torch refuses them.

    Args:
        x: an array of any supported family.
        pattern: the axes of `x`, those to normalize in brackets: ``"b h i [j]"``;
            several bracketed axes are normalized together, ``"b [h w] c"``. An
            optional ``-> ...`` rearranges the result, the same axes bracketed on
            both sides: ``"b [h w] c -> b c [h w]"``.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        An array of `x`'s family, device and shape (rearranged if the pattern says so).

    Raises:
        TensorOpsError: the pattern is malformed, marks no axis, or does not fit.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> scores = np.array([[[0.0, 0.0], [1000.0, 0.0]]])
        >>> tops.softmax(scores, "b i [j]")
        array([[[0.5, 0.5],
                [1. , 0. ]]])
        >>> tops.softmax(np.zeros((2, 4, 5)), "b [h w]").sum(axis=(1, 2))
        array([1., 1.])
    """
    return call(SOFTMAX, x, pattern, lengths, None, None)  # type: ignore[no-any-return]


def log_softmax(x: ArrayT, pattern: str, /, **lengths: int) -> ArrayT:
    """The logarithm of `softmax`, computed as ``x - logsumexp(x)`` (stable).

    Args:
        x: an array of any supported family.
        pattern: as for `softmax`, e.g. ``"b [c]"`` or ``"b [h w] c"``.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        An array of `x`'s family, device and shape.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.log_softmax(np.array([[0.0, 0.0], [-1000.0, 0.0]]), "b [c]")
        array([[-6.93147181e-01, -6.93147181e-01],
               [-1.00000000e+03,  0.00000000e+00]])
    """
    return call(LOG_SOFTMAX, x, pattern, lengths, None, None)  # type: ignore[no-any-return]
