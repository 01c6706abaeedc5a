"""Recorded calls written as Python functions (`tensorops._written`), which Dynamo inlines."""

from __future__ import annotations

import hashlib
import math

import pytest

torch = pytest.importorskip("torch")

import tensorops as tops  # noqa: E402
from tensorops._backends._torch import TorchBackend  # noqa: E402
from tensorops._dispatch import _program, _written_program  # noqa: E402
from tensorops._indexing import GET_AT  # noqa: E402
from tensorops._ops import REARRANGE, REDUCE  # noqa: E402
from tensorops._pack import _pack_program, _unpack_program  # noqa: E402
from tensorops._written import WRITTEN, literal, source, written  # noqa: E402

F32 = torch.float32
ADAPTER = TorchBackend()


def _source_of(name: str) -> str:
    return getattr(WRITTEN, name).__code__.co_filename


def test_a_rearrange_is_written_as_its_tensor_methods() -> None:
    args = ("a (b c) -> c a b", (2, 6), (("b", 3),), None, "torch", (F32,), None)
    program = _program("rearrange", *args)
    assert source(ADAPTER, program, 1, False) == (
        "def call(a, x0):\n"
        "    x1 = x0.reshape((2, 3, 2, ))\n"
        "    x2 = x1.permute((2, 0, 1, ))\n"
        "    return x2\n"
    )
    name, _ = _written_program(REARRANGE, args[0], (2, 6), (("b", 3),), None, ADAPTER, (F32,), None)
    assert name is not None
    x = torch.arange(12.0).reshape(2, 6)
    assert torch.equal(getattr(WRITTEN, name)(ADAPTER, x), tops.rearrange(x, args[0], b=3))
    # the same program, from any call site: one function
    again = _written_program(REARRANGE, args[0], (2, 6), (("b", 3),), None, ADAPTER, (F32,), None)
    assert again == (name, None)
    # named by the adapter and the source, not by the order of writing: the same in
    # every process (a compiled graph naming it may be cached, see tensorops._graph)
    kind = "tensorops._backends._torch.TorchBackend"
    text = source(ADAPTER, program, 1, False)
    assert name == "call_" + hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()[:24]
    other = _written_program(REARRANGE, "a b -> b a", (2, 6), (), None, ADAPTER, (F32,), None)
    assert other[0] is not None
    assert other[0] != name


def test_a_reduction_the_adapter_names_is_a_tensor_method_others_call_the_adapter() -> None:
    mean = _program("reduce", "b c h -> b", (2, 3, 4), (), "mean", "torch", (F32,), None)
    assert "x0.mean((1, 2))" in source(ADAPTER, mean, 1, False)  # type: ignore[operator]
    prod = _program("reduce", "b c h -> b", (2, 3, 4), (), "prod", "torch", (F32,), None)
    text = source(ADAPTER, prod, 1, False)
    assert text is not None
    assert "a.reducer('prod', (1, 2, ))(x0, None)" in text
    x = torch.rand(2, 3, 4) + 0.5
    for reduction in ("mean", "prod"):
        shape = (2, 3, 4)
        name, _ = _written_program(
            REDUCE, "b c h -> b", shape, (), reduction, ADAPTER, (F32,), None
        )
        assert name is not None
        expected = tops.reduce(x, "b c h -> b", reduction)
        torch.testing.assert_close(getattr(WRITTEN, name)(ADAPTER, x), expected)


def test_pack_and_unpack_are_written_with_their_lists() -> None:
    program, packed, name = _pack_program("b * k", ((2, 3, 4), (2, 4)), "torch", (F32, F32))
    assert packed == ((3,), ())
    text = source(ADAPTER, program, 2, True)
    assert text is not None
    assert text.startswith("def call(a, xs):\n    x0, x1 = xs\n")
    assert "torch.cat([x2, x3], dim=1)" in text
    made = _unpack_program("b * k", (2, 4, 4), ((3,), ()), "torch", F32)
    assert made is not None
    steps, unpack_name = made
    text = source(ADAPTER, steps, 1, False)
    assert text is not None
    assert "    x1, x2 = torch.split(x0, [3, 1, ], dim=1)\n" in text
    assert text.endswith("    return [x3, x4]\n")
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4)
    assert name is not None
    assert unpack_name is not None
    packed_array = getattr(WRITTEN, name)(ADAPTER, [a, b])
    assert torch.equal(packed_array, tops.pack([a, b], "b * k")[0])
    pieces = getattr(WRITTEN, unpack_name)(ADAPTER, packed_array)
    assert [torch.equal(p, q) for p, q in zip(pieces, (a, b), strict=True)] == [True, True]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (-1, "-1"),
        (True, "True"),
        (None, "None"),
        ("mean", "'mean'"),
        (0.5, "0.5"),
        ((), "()"),
        ((2, (3, None)), "(2, (3, None, ), )"),
        ([1, 2], "[1, 2, ]"),
        (math.nan, None),
        (math.inf, None),
        (F32, None),  # a dtype: not plain data
        ((1, F32), None),
        ({"a": 1}, None),
    ],
)
def test_only_plain_data_is_written(value: object, text: str | None) -> None:
    assert literal(value) == text
    if text is not None:
        assert eval(text) == value  # what the written source evaluates to


def test_a_program_with_other_constants_is_not_written_and_replays() -> None:
    # a list of results of unknown length (none at all) and a dtype cannot be written
    empty = ((("split", None, (None, [], 0), ((0, 0),), True),), ())
    assert source(ADAPTER, empty, 1, False) is None
    astype = ((("astype", None, (F32,), 0, None),), 1)
    assert source(ADAPTER, astype, 1, False) is None
    assert written(ADAPTER, astype, 1, False) is None
    # get_at's gather is made from a named tuple (with a dtype): replayed, as eagerly
    x, index = torch.randn(2, 5, 3), torch.randint(0, 5, (2, 4))
    pattern = "b [t] c, b p -> b p c"
    dtypes = (F32, torch.int64)
    shapes = ((2, 5, 3), (2, 4))
    name, program = _written_program(
        GET_AT, pattern, shapes, (), torch.int64, ADAPTER, dtypes, None
    )
    assert name is None
    assert program is not None
    assert [step[0] for step in program[0]] == ["gatherer"]

    def gathered(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return tops.get_at(x, index, pattern)

    compiled = torch.compile(gathered, backend="eager", fullgraph=True)
    assert torch.equal(compiled(x, index), gathered(x, index))
