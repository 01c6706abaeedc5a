"""The rows of `new_ops.py` for check, concatenation, named element-wise ops and ops along axes.

Each case is one public call of tensorops on tiny arrays, beside the hand-written
framework code it replaces and einx's call where einx spells the op the same way
(einx has no cumsum). einx is measured, never imported by tensorops.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import tensorops as tops

try:
    import einx
except ImportError:  # the einx column stays empty
    einx = None


class Case(NamedTuple):
    """One op: its arrays for a batch size, and the three ways to call it."""

    name: str
    make: Callable[[int], tuple[Any, ...]]
    ours: Callable[..., Any]
    native: Callable[..., Any]
    theirs: Callable[..., Any] | None


class _Framework(NamedTuple):
    array: Callable[..., Any]
    cat: Callable[..., Any]
    add: Callable[..., Any]
    maximum: Callable[..., Any]
    where: Callable[..., Any]
    flip: Callable[..., Any]
    roll: Callable[..., Any]
    sort: Callable[..., Any]
    argsort: Callable[..., Any]
    cumsum: Callable[..., Any]


def _numpy(rng: np.random.Generator) -> _Framework:
    return _Framework(
        array=lambda *shape: rng.standard_normal(shape).astype(np.float32),
        cat=lambda xs, axis: np.concatenate(xs, axis=axis),
        add=np.add,
        maximum=np.maximum,
        where=np.where,
        flip=lambda x: np.flip(x, 1),
        roll=lambda x: np.roll(x, 1, 1),
        sort=lambda x: np.sort(x, 1, kind="stable"),
        argsort=lambda x: np.argsort(x, 1, kind="stable"),
        cumsum=lambda x: np.cumsum(x, 1),
    )


def _torch(rng: np.random.Generator) -> _Framework:
    import torch

    return _Framework(
        array=lambda *shape: torch.from_numpy(rng.standard_normal(shape).astype(np.float32)),
        cat=lambda xs, axis: torch.cat(xs, axis),
        add=torch.add,
        maximum=torch.maximum,
        where=torch.where,
        flip=lambda x: torch.flip(x, (1,)),
        roll=lambda x: torch.roll(x, 1, 1),
        sort=lambda x: torch.sort(x, dim=1, stable=True).values,
        argsort=lambda x: torch.argsort(x, dim=1, stable=True),
        cumsum=lambda x: torch.cumsum(x, 1),
    )


def _einx(name: str) -> Any:
    return None if einx is None else getattr(einx, name, None)


def _checked(x: Any) -> Any:
    """The hand-written check: the rank and one length, as code asserts them."""
    if x.ndim != 3 or x.shape[2] != 4:
        raise ValueError(f"expected (b, t, 4), got {tuple(x.shape)}")
    return x


def _check_case(make: Any) -> Case:
    theirs = _einx("check")
    return Case(
        "check b t c, c=4",
        make,
        lambda x: tops.check(x, "b t c", c=4),
        _checked,
        None if theirs is None else lambda x: (theirs("b t c", x, c=4), x)[1],
    )


def _concat_cases(fw: _Framework, make: Any) -> list[Case]:
    join, split = "b t c1, b t c2 -> b t (c1 + c2)", "b t (c1 + c2) -> b t c1, b t c2"
    theirs = _einx("id")
    return [
        Case(
            f"rearrange {join}",
            lambda b: (make(b)[0], make(b)[0]),
            lambda x, y: tops.rearrange([x, y], join),
            lambda x, y: fw.cat((x, y), 2),
            None if theirs is None else lambda x, y: theirs(join, x, y),
        ),
        Case(
            f"rearrange {split}",
            make,
            lambda x: tops.rearrange(x, split, c1=1),
            lambda x: (x[:, :, :1], x[:, :, 1:]),
            None if theirs is None else lambda x: theirs(split, x, c1=1),
        ),
    ]


def _elementwise_cases(fw: _Framework, make: Any) -> list[Case]:
    def with_weight(b: int) -> tuple[Any, ...]:
        return (make(b)[0], fw.array(4))

    def condition(b: int) -> tuple[Any, ...]:
        x = make(b)[0]
        return (x > 0, x, fw.array(4))

    cases = []
    for name, call in (("add", fw.add), ("maximum", fw.maximum)):
        ours, theirs = getattr(tops, name), _einx(name)
        cases.append(
            Case(
                f"{name} b t c, c -> b t c",
                with_weight,
                lambda x, w, ours=ours: ours(x, w, "b t c, c -> b t c"),
                lambda x, w, call=call: call(x, w[None, None, :]),
                None
                if theirs is None
                else lambda x, w, theirs=theirs: theirs("b t c, c -> b t c", x, w),
            )
        )
    cases.append(
        Case(
            "elementwise(mul) b t c, c -> b t c",
            with_weight,
            lambda x, w: tops.elementwise(operator.mul, x, w, "b t c, c -> b t c"),
            lambda x, w: operator.mul(x, w[None, None, :]),
            None,  # einx 0.4 removed einx.elementwise
        )
    )
    where = _einx("where")
    cases.append(
        Case(
            "where b t c, b t c, c -> b t c",
            condition,
            lambda c, x, w: tops.where(c, x, w, "b t c, b t c, c -> b t c"),
            lambda c, x, w: fw.where(c, x, w[None, None, :]),
            None if where is None else lambda c, x, w: where("b t c, b t c, c -> b t c", c, x, w),
        )
    )
    return cases


def _along_cases(fw: _Framework, make: Any) -> list[Case]:
    cases = []
    for name in ("flip", "roll", "sort", "argsort", "cumsum"):
        ours, theirs = getattr(tops, name), _einx(name)
        keywords: dict[str, Any] = {"shift": 1} if name == "roll" else {}
        cases.append(
            Case(
                f"{name} b [t] c" + (" shift=1" if keywords else ""),
                make,
                lambda x, ours=ours, keywords=keywords: ours(x, "b [t] c", **keywords),
                getattr(fw, name),
                None
                if theirs is None
                else lambda x, theirs=theirs, keywords=keywords: theirs("b [t] c", x, **keywords),
            )
        )
    return cases


def check_switched_off(xp: str, rounds: int, seconds: float, best_times: Any) -> str:
    """A table row: ``check`` with ``config.checks = False`` beside a call returning x."""
    rng = np.random.default_rng(2)
    x = (_numpy(rng) if xp == "numpy" else _torch(rng)).array(2, 5, 4)
    before = tops.config.checks
    tops.config.checks = False
    try:
        off, identity = best_times(
            [lambda: tops.check(x, "b t c", c=4), lambda: _identity(x)], rounds, seconds
        )
    finally:
        tops.config.checks = before
    return f"| {xp} | check, switched off | {off:.2f} | {identity:.2f} | | {off - identity:.2f} |"


def _identity(x: Any) -> Any:
    return x


def pattern_op_cases(xp: str) -> list[Case]:
    """The new ops on tiny arrays of `xp` ("numpy" or "torch"); batch sizes vary for cold calls."""
    rng = np.random.default_rng(1)
    fw = _numpy(rng) if xp == "numpy" else _torch(rng)

    def three(b: int) -> tuple[Any, ...]:
        return (fw.array(b, 5, 4),)

    return [
        _check_case(three),
        *_concat_cases(fw, three),
        *_elementwise_cases(fw, three),
        *_along_cases(fw, three),
    ]
