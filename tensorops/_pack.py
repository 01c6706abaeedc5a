"""pack, unpack and parse_shape: patterns with ``*`` and ``_``, einops' semantics."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar

from tensorops._axes import DOTS_PREFIX, count_dots, resolve_dims, term_dims
from tensorops._backends import ADAPTERS, backend_for_name, get_backend
from tensorops._dispatch import recorder_for
from tensorops._errors import (
    ArgumentError,
    PatternError,
    ShapeError,
    TensorOpsError,
    describe_inputs,
    not_a_pattern,
)
from tensorops._grammar import Anon, Axis, Dots, Group, Skip, Star, Term, check_names, parse_pattern
from tensorops._tracing import (
    IS_DYNAMO,
    REPLAYING,
    STAND_INS,
    Program,
    constant_result,
    is_compiling,
    is_dynamo_tracing,
    outside_trace,
    raise_error,
    record,
    replay,
    replayable,
)
from tensorops._written import WRITTEN, written

__all__ = ["pack", "parse_shape", "unpack"]

ArrayT = TypeVar("ArrayT")
Shape = tuple[int, ...]


@functools.lru_cache(maxsize=256)
def _pack_term(op: str, pattern: str) -> tuple[int, int]:
    """(position of ``*``, number of other axes) of a pack / unpack pattern.

    Under torch.compile, Dynamo traces this body on every call: the pattern is read
    outside the trace (`_pack_term_outside`), and traced only to raise its error.
    """
    if is_dynamo_tracing():
        read = _pack_term_outside(op, pattern)
        if read is not None:
            return read
    term = _single_term(op, pattern)
    stars = [i for i, e in enumerate(term.elements) if isinstance(e, Star)]
    if len(stars) != 1:
        span = term.elements[stars[1]].span if stars else term.span
        raise PatternError(
            f"{op} needs exactly one '*' in the pattern, got {len(stars)}",
            pattern=pattern,
            span=span,
            hint="e.g. 'b * c': '*' marks the axes that are packed",
        )
    seen: set[str] = set()
    for element in term.elements:
        if isinstance(element, Axis):
            if element.name in seen:
                raise PatternError(
                    f"axis '{element.name}' appears twice", pattern=pattern, span=element.span
                )
            seen.add(element.name)
        elif not isinstance(element, Star):
            raise PatternError(
                f"{op} patterns hold axis names and one '*' only",
                pattern=pattern,
                span=element.span,
            )
    return stars[0], len(term.elements) - 1


_pack_term_outside = outside_trace(_pack_term)


def _single_term(op: str, pattern: Any) -> Term:
    if not isinstance(pattern, str):
        raise not_a_pattern(pattern, f"{op}(x, 'b * c')")
    parsed = parse_pattern(pattern)
    check_names(parsed)
    if parsed.outputs is not None or len(parsed.inputs) != 1:
        span = parsed.arrow if parsed.arrow is not None else parsed.inputs[1].span
        raise PatternError(
            f"{op} takes a single term without '->' or ','",
            pattern=pattern,
            span=span,
            hint="separate axes with spaces, not commas",
        )
    return parsed.inputs[0]


@replayable("pack")
def pack(tensors: Sequence[ArrayT], pattern: str) -> tuple[ArrayT, list[Shape]]:
    """Pack arrays into one by flattening the axes under ``*`` and concatenating along them.

    Args:
        tensors: arrays of one family whose axes outside ``*`` agree.
        pattern: axis names with one ``*``, e.g. ``"b * d"``.

    Returns:
        The packed array and the shapes that ``*`` covered in each input, which
        `unpack` takes to undo the packing.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> cls_token, patches = np.zeros((2, 8)), np.zeros((2, 16, 8))
        >>> packed, ps = tops.pack([cls_token, patches], "b * d")
        >>> packed.shape, ps
        ((2, 17, 8), [(), (16,)])
    """
    if IS_DYNAMO and not REPLAYING and IS_DYNAMO[0]():  # `is_dynamo_tracing`, inline
        recorded = _recorded_pack(tensors, pattern)
        if recorded is not None:
            return recorded
    try:
        position, n_other = _pack_term("pack", pattern)
        if isinstance(tensors, (str, bytes)) or not isinstance(tensors, Sequence) or not tensors:
            raise ArgumentError("pack takes a non-empty list of arrays")
        return _pack_with(get_backend(tensors[0]), tensors, position, n_other)
    except TensorOpsError as error:
        raise_error(_in_context(error, "pack", pattern, tensors), ("pack", (tensors, pattern)))


def _pack_with(
    backend: Any, tensors: Sequence[Any], position: int, n_other: int
) -> tuple[Any, list[Shape]]:
    """`pack` with `backend`, once the pattern is read (a `Recorder` records it)."""
    flat, shapes = [], []
    reference: Shape | None = None
    for i, x in enumerate(tensors):
        if type(x) is not type(tensors[0]):
            raise ArgumentError(f"element {i} is a {type(x).__name__}, not an array")
        shape = tuple(x.shape)
        if len(shape) < n_other:
            raise ShapeError(
                f"input {i} has {len(shape)} dimensions, the pattern needs at least {n_other}"
            )
        end = len(shape) - (n_other - position)
        outside = shape[:position] + shape[end:]
        if reference is None:
            reference = outside
        elif outside != reference:
            raise ShapeError(f"input {i} has axes {outside} outside '*', input 0 has {reference}")
        shapes.append(shape[position:end])
        size = 1
        for d in shape[position:end]:
            size *= d
        flat.append(backend.reshape(x, (*shape[:position], size, *shape[end:])))
    return backend.concat(flat, position), shapes


@replayable("unpack")
def unpack(tensor: ArrayT, packed_shapes: Sequence[Sequence[int]], pattern: str) -> list[ArrayT]:
    """Undo `pack`: split along ``*`` and restore each piece's shape.

    Args:
        tensor: the packed array (einops' name for it, so that
            ``unpack(tensor=..., packed_shapes=..., pattern=...)`` works as in einops).
        packed_shapes: the shapes ``*`` stands for in each piece, as returned by
            ``pack``; one length in all of them may be ``-1`` (inferred).
        pattern: the pattern given to ``pack``.

    Returns:
        The pieces, as views of ``tensor`` where the framework can.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> packed = np.zeros((2, 17, 8))
        >>> [p.shape for p in tops.unpack(packed, [(), (16,)], "b * d")]
        [(2, 8), (2, 16, 8)]
        >>> len(tops.unpack(tensor=packed, packed_shapes=[(17,)], pattern="b * d"))
        1
    """
    if IS_DYNAMO and not REPLAYING and IS_DYNAMO[0]():  # `is_dynamo_tracing`, inline
        recorded = _recorded_unpack(tensor, packed_shapes, pattern)
        if recorded is not None:
            return recorded
    try:
        position, n_other = _pack_term("unpack", pattern)
        return _unpack_with(get_backend(tensor), tensor, packed_shapes, position, n_other)
    except TensorOpsError as error:
        raise_error(
            _in_context(error, "unpack", pattern, [tensor]),
            ("unpack", (tensor, packed_shapes, pattern)),
        )


def _unpack_with(
    backend: Any, tensor: Any, packed_shapes: Sequence[Sequence[int]], position: int, n_other: int
) -> list[Any]:
    """`unpack` with `backend`, once the pattern is read (a `Recorder` records it)."""
    shape = tuple(tensor.shape)
    if len(shape) != n_other + 1:
        raise ShapeError(
            f"the packed input has {len(shape)} dimensions, the pattern has {n_other + 1}"
        )
    shapes = _resolve_packed_shapes(packed_shapes, shape[position])
    sizes = []
    for piece in shapes:
        size = 1
        for d in piece:
            size *= d
        sizes.append(size)
    # one piece is the whole array: no split (a framework call of its own)
    pieces = [tensor] if len(sizes) == 1 else backend.split(tensor, sizes, position)
    before, after = shape[:position], shape[position + 1 :]
    return [backend.reshape(p, before + s + after) for p, s in zip(pieces, shapes, strict=True)]


def _recorded_pack(tensors: Any, pattern: Any) -> tuple[Any, list[Shape]] | None:
    """`pack` under Dynamo as the framework calls `_pack_program` recorded; None if it did not.

    For arrays of an adapter with recording stand-ins and plain sizes (``numel`` is a
    plain int exactly then, or when a size is 0); anything else (and every error) is
    traced as eager code runs. Loops, not comprehensions or helpers: each frame
    Dynamo inlines costs capture time.
    """
    if type(pattern) is not str or not isinstance(tensors, (list, tuple)) or not tensors:
        return None
    adapter = ADAPTERS.get(type(tensors[0]))
    if adapter is None or adapter.name not in STAND_INS:
        return None
    shapes: tuple[Any, ...] = ()
    dtypes: tuple[Any, ...] = ()
    for x in tensors:
        if ADAPTERS.get(type(x)) is not adapter:
            return None
        count = x.numel()
        if count.__class__ is not int or count == 0:
            return None
        shapes += (x.shape,)
        dtypes += (x.dtype,)
    made = _pack_program(pattern, shapes, adapter.name, dtypes)
    if made is None:
        return None
    program, packed, name = made
    if name is not None:  # the program as a function Dynamo inlines (`tensorops._written`)
        return getattr(WRITTEN, name)(adapter, tensors), list(packed)
    return replay(adapter, program, list(tensors)), list(packed)


def _recorded_unpack(tensor: Any, packed_shapes: Any, pattern: Any) -> list[Any] | None:
    """`unpack` under Dynamo as `_unpack_program` recorded it; None if it did not."""
    adapter = ADAPTERS.get(type(tensor))
    if adapter is None or adapter.name not in STAND_INS or type(pattern) is not str:
        return None
    count = tensor.numel()
    if count.__class__ is not int or count == 0 or not isinstance(packed_shapes, (list, tuple)):
        return None
    pieces: tuple[Any, ...] = ()
    for piece in packed_shapes:  # isinstance: `type` of a constant cannot be guarded
        if not isinstance(piece, (list, tuple)):
            return None
        for n in piece:
            if n.__class__ is not int:
                return None
        pieces += (tuple(piece),)
    made = _unpack_program(pattern, tensor.shape, pieces, adapter.name, tensor.dtype)
    if made is None:
        return None
    program, name = made
    if name is not None:
        return getattr(WRITTEN, name)(adapter, tensor)  # type: ignore[no-any-return]
    return replay(adapter, program, [tensor])  # type: ignore[no-any-return]


@constant_result
def _pack_program(
    pattern: str, shapes: tuple[Shape, ...], family: str, dtypes: tuple[Any, ...]
) -> tuple[Program, tuple[Shape, ...], str | None] | None:
    """The framework calls of `pack` on arrays of these shapes, and its packed shapes.

    Also the name in `WRITTEN` of the calls written as a function, or None.
    """
    shapes = tuple(tuple(shape) for shape in shapes)  # torch.Size, from the trace
    packed: list[Shape] = []

    def run(arrays: Any, _: Any) -> Any:
        result, found = _pack_with(recorder_for(family), arrays, *_pack_term("pack", pattern))
        packed.extend(found)
        return result

    program = _record_outside(family, run, list(zip(shapes, dtypes, strict=True)))
    if program is None:
        return None
    return program, tuple(packed), written(backend_for_name(family), program, len(shapes), True)


@constant_result
def _unpack_program(
    pattern: str, shape: Shape, pieces: tuple[Shape, ...], family: str, dtype: Any
) -> tuple[Program, str | None] | None:
    """The framework calls of `unpack` on an array of this shape into `pieces`.

    Also the name in `WRITTEN` of the calls written as a function, or None.
    """
    shape = tuple(shape)

    def run(arrays: Any, _: Any) -> Any:
        term = _pack_term("unpack", pattern)
        return _unpack_with(recorder_for(family), arrays[0], pieces, *term)

    program = _record_outside(family, run, [(shape, dtype)])
    if program is None:
        return None
    return program, written(backend_for_name(family), program, 1, False)


def _record_outside(family: str, run: Any, inputs: list[tuple[Shape, Any]]) -> Program | None:
    """`run` recorded on stand-ins of `inputs` (shape, dtype); None on any error."""
    stand_in = STAND_INS.get(family)
    if stand_in is None:
        return None
    try:
        arrays = [stand_in(shape, str(dtype)) for shape, dtype in inputs]
        return record(lambda: run, arrays, None, True)
    except Exception:  # an error: traced, to raise it as eager code does
        return None


def _resolve_packed_shapes(packed_shapes: Sequence[Sequence[int]], total: int) -> list[Shape]:
    try:
        shapes = [tuple(int(d) for d in s) for s in packed_shapes]
    except (TypeError, ValueError):
        raise ArgumentError(
            "packed_shapes must be a list of shapes (tuples of ints), as pack returns"
        ) from None
    unknown = [(i, j) for i, s in enumerate(shapes) for j, d in enumerate(s) if d == -1]
    if any(d < -1 for s in shapes for d in s):
        raise ShapeError(f"packed_shapes {shapes} hold a negative length")
    known = 0
    for s in shapes:
        size = 1
        for d in s:
            size *= d if d != -1 else 1
        if -1 not in s:
            known += size
    if len(unknown) > 1:
        raise ShapeError(f"packed_shapes {shapes} hold more than one -1")
    if unknown:
        i, j = unknown[0]
        rest = 1
        for k, d in enumerate(shapes[i]):
            if k != j:
                rest *= d
        if rest == 0 or (total - known) % rest or total < known:
            raise ShapeError(f"cannot infer the -1 in packed_shapes {shapes} from {total} elements")
        piece = list(shapes[i])
        piece[j] = (total - known) // rest
        shapes[i] = tuple(piece)
        known = total
    if known != total:
        raise ShapeError(
            f"packed_shapes {shapes} cover {known} elements along '*', the input has {total}"
        )
    return shapes


def _in_context(error: TensorOpsError, op: str, pattern: Any, inputs: Any) -> TensorOpsError:
    """`error` with the call's op, pattern and `inputs` (a list of them) described."""
    if is_compiling():  # the error is made again outside the trace, context and all
        return error
    shown = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    pattern_text = pattern if isinstance(pattern, str) else None
    return error.with_context(op=op, pattern=pattern_text, inputs=describe_inputs(shown))


@replayable("parse_shape")
def parse_shape(x: Any, pattern: str) -> dict[str, int]:
    """Name the axes of an array's shape.

    Args:
        x: any array (anything with a ``shape``).
        pattern: axis names, ``_`` to skip an axis, ``...`` for any number of axes,
            ``1`` or ``()`` for an axis of length 1 and an integer for an axis of
            that length (both checked, as einops does).

    Returns:
        A dict from each name to its length, in the pattern's order.

    Raises:
        TensorOpsError: the pattern does not fit the shape.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.parse_shape(np.zeros((8, 3, 32, 32)), "b c _ _")
        {'b': 8, 'c': 3}
        >>> tops.parse_shape(np.zeros((8, 3, 32, 32)), "b ... w")
        {'b': 8, 'w': 32}
        >>> tops.parse_shape(np.zeros((1, 3, 5)), "() 3 n")
        {'n': 5}
    """
    try:
        term = _single_term("parse_shape", pattern)
        shape = getattr(x, "shape", None)
        if shape is None:
            get_backend(x)  # raises the unsupported-type error
        return _match_shape(pattern, term, tuple(shape))  # type: ignore[arg-type]
    except TensorOpsError as error:
        raise_error(_in_context(error, "parse_shape", pattern, [x]), ("parse_shape", (x, pattern)))


def _match_shape(pattern: str, term: Term, shape: Shape) -> dict[str, int]:
    elements = term.elements
    for element in elements:
        unit = isinstance(element, Group) and not element.items
        if not (isinstance(element, (Axis, Skip, Dots, Anon)) or unit):
            raise PatternError(
                "parse_shape patterns hold axis names, '_', '...', integers and '()' only",
                pattern=pattern,
                span=element.span,
                hint="a composed axis (a b) has no single length to name",
            )
    dots = [element.span for element in elements if isinstance(element, Dots)]
    if len(dots) > 1:
        raise PatternError("'...' appears twice", pattern=pattern, span=dots[1])
    dims = term_dims(term, count_dots(pattern, term, len(shape)))
    result: dict[str, int] = {}
    for resolved in resolve_dims(pattern, dims, shape, {}):
        for slot, length in resolved:
            name = slot.name
            if name is None or slot.length is not None or name[0] == DOTS_PREFIX:
                continue
            if result.setdefault(name, length) != length:
                raise ShapeError(
                    f"axis '{name}' has lengths {result[name]} and {length}",
                    pattern=pattern,
                    span=slot.span,
                )
    return result
