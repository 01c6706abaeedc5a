"""pack, unpack and parse_shape: patterns with ``*`` and ``_``, einops' semantics."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from tensorops._axes import DOTS_PREFIX, count_dots, may_equal, product, resolve_dims, term_dims
from tensorops._backends import ADAPTERS, get_backend
from tensorops._errors import (
    FAST_PATH_MISSES,
    ArgumentError,
    ShapeError,
    TensorOpsError,
    describe_inputs,
)
from tensorops._grammar import Term
from tensorops._pack_patterns import (
    axis_positions,
    pack_positions,
    pack_term,
    shape_term,
)
from tensorops._staging import is_compiling, raise_error, replayable
from tensorops._staging.sizes import RunTimeSize, known_as, require_equal

__all__ = ["axis_positions", "pack", "pack_positions", "parse_shape", "unpack"]

ArrayT = TypeVar("ArrayT")
Shape = tuple[int, ...]


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
    try:  # the fast path: arrays of one type, plain shapes, a plan made before
        arrays: Any = tensors
        kind = arrays[0].__class__
        adapter = ADAPTERS[kind]
        if tensors.__class__ is not list and tensors.__class__ is not tuple:
            raise TypeError
        shapes = []
        for x in arrays:
            if x.__class__ is not kind:
                raise TypeError
            shapes.append(x.shape)
        plan = _packer(pattern, tuple(shapes), adapter)
    except (*FAST_PATH_MISSES, IndexError, TensorOpsError):  # said again by the slow path
        plan = None  # called outside this block: its errors chain to nothing
    if plan is None:
        return _pack_slowly(tensors, pattern)
    position, targets, packed = plan
    reshape = adapter.reshape
    flat = [x if t is None else reshape(x, t) for x, t in zip(arrays, targets)]  # noqa: B905
    return adapter.concat(flat, position), list(packed)


def _pack_slowly(tensors: Sequence[Any], pattern: str) -> tuple[Any, list[Shape]]:
    """`pack` of anything: mixed array types, shapes of graphs, every error."""
    try:
        position, n_other = pack_term("pack", pattern)
        if (
            tensors.__class__ is not list
            and (isinstance(tensors, (str, bytes)) or not isinstance(tensors, Sequence))
        ) or not tensors:
            raise ArgumentError("pack takes a non-empty list of arrays")
        return _pack_with(get_backend(tensors[0]), tensors, position, n_other)
    except TensorOpsError as error:
        raise_error(_in_context(error, "pack", pattern, tensors), ("pack", (tensors, pattern)))


@functools.lru_cache(maxsize=1024)
def _packer(
    pattern: str, shapes: tuple[Shape, ...], adapter: Any
) -> tuple[int, tuple[Shape | None, ...], tuple[Shape, ...]]:
    """`pack`'s plan for arrays of these plain shapes: concat axis, reshapes, shapes under ``*``.

    Each array's reshape is None where it has its packed shape already. Planned from
    the ints alone; a shape that does not fit, or lengths of a graph, are
    for the slow path (which says what does not fit, or reads the graph's lengths).
    """
    if adapter.traced(shapes):
        raise KeyError("sizes of a graph: planned by the slow path")
    position, n_other = pack_term("pack", pattern)
    after = position - n_other  # the axes after '*', counted from the end
    first = shapes[0]
    head, tail = first[:position], first[len(first) + after :]
    targets: list[Shape | None] = []
    packed: list[Shape] = []
    for shape in shapes:
        end = len(shape) + after
        piece = shape[position:end]
        if end < position or shape[:position] != head or shape[end:] != tail:
            raise KeyError("the slow path says what does not fit")
        packed.append(piece)
        # one axis under '*': the array has its packed shape already
        targets.append(None if len(piece) == 1 else (*head, product(piece), *tail))
    return position, tuple(targets), tuple(packed)


def _same_family(x: Any, backend: Any) -> bool:
    """Whether ``x`` is an array of `backend`'s family (a tf.Variable among tf.Tensors)."""
    try:
        return get_backend(x) is backend
    except TensorOpsError:
        return False


def _pack_with(
    backend: Any, tensors: Sequence[Any], position: int, n_other: int
) -> tuple[Any, list[Shape]]:
    """`pack` with `backend`, once the pattern is read."""
    kind = type(tensors[0])

    def shapes() -> Iterator[Shape]:  # each array checked as its shape is read
        for i, x in enumerate(tensors):
            if type(x) is not kind and not _same_family(x, backend):
                raise ArgumentError(f"element {i} is a {type(x).__name__}, not an array")
            yield backend.sizes(x)  # not x.shape: a graph on PyTensor

    targets, packed = _pack_shapes(shapes(), position, n_other, backend)
    flat = [x if t is None else backend.reshape(x, t) for x, t in zip(tensors, targets)]  # noqa: B905
    return backend.concat(flat, position), packed


def _pack_shapes(
    shapes: Iterable[Shape], position: int, n_other: int, backend: Any
) -> tuple[list[Shape | None], list[Shape]]:
    """Each array's reshape (None where it has its shape) and the shapes that ``*`` covers."""
    targets: list[Shape | None] = []
    packed_shapes: list[Shape] = []
    reference: Shape | None = None
    after = n_other - position
    for i, shape in enumerate(shapes):
        plain = all(type(n) is int for n in shape)
        if len(shape) < n_other:
            raise ShapeError(
                f"input {i} has {len(shape)} dimensions, the pattern needs at least {n_other}"
            )
        end = len(shape) - after
        before, packed, rest = shape[:position], shape[position:end], shape[end:]
        outside = before + rest
        if reference is None:
            reference = outside
        # tuples of ints compare at once; other lengths may be equal when a graph runs
        elif outside != reference if plain else not may_equal(outside, reference):
            raise ShapeError(f"input {i} has axes {outside} outside '*', input 0 has {reference}")
        # a length known only when the graph runs as the framework's own scalar, which
        # unpack takes back (as parse_shape's)
        packed_shapes.append(packed if plain else tuple(backend.outward_size(n) for n in packed))
        size = 1
        for d in packed:
            size *= d
        target = (*before, size, *rest)
        targets.append(None if plain and len(packed) == 1 else target)
    return targets, packed_shapes


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
    try:  # the fast path: plain shapes and lengths, a plan made before
        array: Any = tensor
        adapter = ADAPTERS[array.__class__]
        run = _unpacker(pattern, array.shape, tuple([tuple(s) for s in packed_shapes]), adapter)
    except (*FAST_PATH_MISSES, ValueError, TensorOpsError):  # said again by the slow path
        run = None  # called outside this block: its errors chain to nothing
    return _unpack_slowly(tensor, packed_shapes, pattern) if run is None else run(tensor)


def _unpack_slowly(tensor: Any, packed_shapes: Sequence[Sequence[int]], pattern: str) -> list[Any]:
    """`unpack` of anything: lengths of graphs, ``-1``, every error."""
    try:
        position, n_other = pack_term("unpack", pattern)
        return _unpack_with(get_backend(tensor), tensor, packed_shapes, position, n_other)
    except TensorOpsError as error:
        raise_error(
            _in_context(error, "unpack", pattern, [tensor]),
            ("unpack", (tensor, packed_shapes, pattern)),
        )


@functools.lru_cache(maxsize=1024)
def _unpacker(
    pattern: str, shape: Shape, packed_shapes: tuple[Shape, ...], adapter: Any
) -> Callable[[Any], list[Any]]:
    """The calls of `unpack` for a plain shape and lengths: one split, then reshapes."""
    if adapter.traced(shape) or not all(
        type(n) is int and n >= 0 for s in packed_shapes for n in s
    ):
        raise KeyError("a length to infer or of a graph: the slow path reads it")
    position, n_other = pack_term("unpack", pattern)
    sizes = [product(piece) for piece in packed_shapes]
    if len(shape) != n_other + 1 or sum(sizes) != shape[position]:
        raise KeyError("the slow path says what does not fit")
    before, after = shape[:position], shape[position + 1 :]
    targets = [(*before, *s, *after) for s in packed_shapes]
    split, reshape = adapter.split, adapter.reshape
    if len(sizes) == 1:  # one piece is the whole array: no split (a framework call of its own)
        return lambda tensor: [reshape(tensor, targets[0])]
    # a piece that keeps one axis for '*' has its shape already
    kept = [None if len(s) == 1 else t for s, t in zip(packed_shapes, targets)]  # noqa: B905

    def run(tensor: Any) -> list[Any]:
        pieces = split(tensor, sizes, position)
        return [p if t is None else reshape(p, t) for p, t in zip(pieces, kept)]  # noqa: B905

    return run


def _unpack_with(
    backend: Any, tensor: Any, packed_shapes: Sequence[Sequence[int]], position: int, n_other: int
) -> list[Any]:
    """`unpack` with `backend`, once the pattern is read."""
    shape = backend.sizes(tensor)  # not tensor.shape: a graph on PyTensor
    if len(shape) != n_other + 1:
        raise ShapeError(
            f"the packed input has {len(shape)} dimensions, the pattern has {n_other + 1}"
        )
    shapes = _resolve_packed_shapes(packed_shapes, shape[position], backend)
    sizes = [product(piece) for piece in shapes]
    # one piece is the whole array: no split (a framework call of its own)
    pieces = [tensor] if len(sizes) == 1 else backend.split(tensor, sizes, position)
    before, after = shape[:position], shape[position + 1 :]
    return [backend.reshape(p, before + s + after) for p, s in zip(pieces, shapes, strict=True)]


def _resolve_packed_shapes(
    packed_shapes: Sequence[Sequence[int]], total: Any, backend: Any
) -> list[Shape]:
    try:
        shapes = [tuple(s) for s in packed_shapes]
        # type(): what Dynamo can trace (it gives int as a symbolic size's type, and a
        # symbolic size is taken as it is either way)
        ints = all(type(d) is int for s in shapes for d in s)
        if not ints:  # NumPy's integers, symbolic sizes, lengths known when a graph runs
            shapes = [tuple(_length(d, backend) for d in s) for s in shapes]
    except (TypeError, ValueError):
        raise ArgumentError(
            "packed_shapes must be a list of shapes (tuples of ints), as pack returns"
        ) from None
    unknown: list[tuple[int, int]] = []
    if not (ints and all(d >= 0 for s in shapes for d in s)):  # a -1 to infer
        unknown = [(i, j) for i, s in enumerate(shapes) for j, d in enumerate(s) if known_as(d, -1)]
        if any(_is_int(d) and d < -1 for s in shapes for d in s):
            raise ShapeError(f"packed_shapes {shapes} hold a negative length")
        if len(unknown) > 1:
            raise ShapeError(f"packed_shapes {shapes} hold more than one -1")
    known: Any = 0
    for s in shapes:
        size: Any = 1
        for d in s:
            size *= 1 if known_as(d, -1) else d
        if not any(known_as(d, -1) for d in s):
            known += size
    if unknown:
        i, j = unknown[0]
        rest: Any = 1
        for k, d in enumerate(shapes[i]):
            if k != j:
                rest *= d
        if all(_is_int(n) for n in (rest, total, known)) and (
            rest == 0 or (total - known) % rest or total < known
        ):
            raise ShapeError(f"cannot infer the -1 in packed_shapes {shapes} from {total} elements")
        piece = list(shapes[i])
        piece[j] = (total - known) // rest
        shapes[i] = tuple(piece)
        known = total
    require_equal(
        known,
        total,
        lambda: ShapeError(
            f"packed_shapes {shapes} cover {known} elements along '*', the input has {total}"
        ),
    )
    return shapes


def _is_int(n: Any) -> bool:
    """Whether `n` is a length known now (an int, or torch.compile's symbolic int)."""
    return type(n) is not RunTimeSize


def _length(d: Any, backend: Any) -> Any:
    """A length of `packed_shapes`: an int, a symbolic size, or a length known when a graph runs.

    ``int()`` of a symbolic size would fix it to its present value (a recompilation
    for every other value): only other integer types (NumPy's) are converted. The
    framework's own scalar for a length (pack's, parse_shape's) is read as a run-time size.
    """
    if type(d) is int or type(d).__name__ == "SymInt":
        return d
    if backend.is_length(d):
        return backend.inward_lengths({"": d})[""]
    if isinstance(d, bool) or not hasattr(d, "__index__"):
        raise TypeError(d)
    return d.__index__()


def _sizes(x: Any, shape: Any) -> tuple[tuple[Any, ...], Callable[[Any], Any] | None]:
    """The shape of an array as its adapter reads it; `shape` itself for anything else.

    With it, the adapter's ``outward_size`` where it has one: what a size read so becomes
    in parse_shape's answer (on PyTensor, the framework's own scalar graph).
    """
    try:
        adapter = get_backend(x)
    except TensorOpsError:  # not an array of a known family: anything with a shape
        return tuple(shape), None
    return adapter.sizes(x), getattr(adapter, "outward_size", None)


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
        term = shape_term(pattern)
        shape = getattr(x, "shape", None)
        outward = None
        if shape is None:
            get_backend(x)  # raises the unsupported-type error
        elif not isinstance(shape, tuple) or not all(type(n) is int for n in shape):
            # the adapter reads it: PyTensor's x.shape is a graph, a traced or staged shape
            # holds lengths known only when the graph runs
            shape, outward = _sizes(x, shape)
        parsed = _match_shape(pattern, term, tuple(shape))  # type: ignore[arg-type]
        if outward is not None:
            parsed = {name: outward(size) for name, size in parsed.items()}
        return parsed
    except TensorOpsError as error:
        raise_error(_in_context(error, "parse_shape", pattern, [x]), ("parse_shape", (x, pattern)))


def _match_shape(pattern: str, term: Term, shape: Shape) -> dict[str, int]:
    dims = term_dims(term, count_dots(pattern, term, len(shape)))
    result: dict[str, int] = {}
    for resolved in resolve_dims(pattern, dims, shape, {}):
        for slot, length in resolved:
            name = slot.name
            if name is None or slot.length is not None or name[0] == DOTS_PREFIX:
                continue
            # sizes known only when the graph runs are not compared while it is traced
            if not may_equal((result.setdefault(name, length),), (length,)):
                raise ShapeError(
                    f"axis '{name}' has lengths {result[name]} and {length}",
                    pattern=pattern,
                    span=slot.span,
                )
    return result
