"""The linter's error codes: one per rule, each with an example, and which code an error gets.

An error found by planning a call (`tensorops._lint.planning`) is the run time's own
`TensorOpsError`; its code is read from its reason by `code_of`, the first rule of
`_READERS` whose words it contains. The rules of einops and of the einsum functions
of NumPy, PyTorch, JAX and opt_einsum that tensorops does not share are raised with
their code by `tensorops._lint.libraries`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["RULES", "Rule", "code_of"]


class Rule(NamedTuple):
    """One rule: its code, a short name, what it finds, and a call that breaks it."""

    code: str
    name: str
    summary: str
    example: str


RULES: tuple[Rule, ...] = (
    Rule(
        "TOP001",
        "syntax",
        "the pattern does not parse: a parenthesis or bracket left open, a character the "
        "grammar has no use for, a second '->', no '->' where the op needs one, a name "
        "that is not an identifier",
        'tops.rearrange(x, "b (h w -> b h w", h=2)',
    ),
    Rule(
        "TOP002",
        "one-sided-axis",
        "an axis on one side only (rearrange), or on the output but in no input "
        "(reduce, einsum, the element-wise ops, EinMix)",
        'einops.rearrange(x, "b c h w -> b h w")',
    ),
    Rule(
        "TOP003",
        "repeated-axis",
        "an axis twice within one term (einsum's inputs may repeat one: a diagonal)",
        'tops.reduce(x, "b c c -> b", "sum")',
    ),
    Rule(
        "TOP004",
        "unknown-reduction",
        "a reduction name that the library does not have",
        'einops.reduce(x, "b c h w -> b c", "maen")',
    ),
    Rule(
        "TOP005",
        "term-count",
        "more or fewer terms than operands (einsum, pack, the element-wise and indexing "
        "ops), or than the op takes",
        'torch.einsum("bij,bjk->bik", a)',
    ),
    Rule(
        "TOP006",
        "unused-length",
        "a keyword length for an axis the pattern lacks",
        'tops.rearrange(x, "b (h w) -> b h w", h=2, c=3)',
    ),
    Rule(
        "TOP007",
        "missing-length",
        "an axis whose length nothing gives: new in repeat without a length, or two "
        "unknown axes composed into one dimension",
        'tops.repeat(x, "h w -> h w c")',
    ),
    Rule(
        "TOP008",
        "lengths-do-not-fit",
        "lengths that cannot fit: a composition whose literal lengths cannot divide the "
        "dimension a literal shape gives, shapes that disagree on an axis",
        'tops.rearrange(np.zeros((4, 9)), "b (h w) -> b h w", h=2)',
    ),
    Rule(
        "TOP009",
        "numeric-axis",
        "an integer axis where the rules forbid it (rearrange's sides, repeat's input, "
        "reduce's output, the element-wise ops)",
        'einops.rearrange(x, "b (c 2) -> b c 3")',
    ),
    Rule(
        "TOP010",
        "ellipsis",
        "'...' twice in a term, on one side only, or inside parentheses on the left",
        'tops.rearrange(x, "... c ... -> c ...")',
    ),
    Rule(
        "TOP011",
        "element-not-accepted",
        "an element the op does not take: brackets outside softmax and the indexing "
        "ops, '_' outside parse_shape, '*' outside pack and unpack, '+' outside "
        "rearrange and einsum, axes not in brackets where the op needs them",
        'tops.softmax(x, "b h i j")',
    ),
    Rule(
        "TOP012",
        "tensorops-only-syntax",
        "tensorops syntax in an einops call, which einops refuses: '+' (concatenation), "
        "several terms separated by ',', a reduction einops does not have",
        'einops.rearrange([x, y], "b c1, b c2 -> b (c1 + c2)")',
    ),
    Rule(
        "TOP013",
        "einops-einsum-form",
        "an einops.einsum pattern einops refuses: no '->', a composition '( )', an integer axis",
        'einops.einsum(x, w, "b (h d), d e -> b h e")',
    ),
    Rule(
        "TOP014",
        "einsum-letters",
        "an axis of a numpy.einsum or torch.einsum equation that is not an ASCII letter",
        'numpy.einsum("\u03b1j,jk->\u03b1k", a, b)  # a Greek alpha',
    ),
)

_CODES = frozenset(rule.code for rule in RULES)

# The words of each rule's run-time reasons; the first rule whose words a reason has wins.
_READERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (code, re.compile(words))
    for code, words in (
        ("TOP004", r"^unknown reduction"),
        ("TOP011", r"patterns hold|needs exactly one"),
        ("TOP010", r"'\.\.\.'"),
        ("TOP003", r"appears twice|appears more than once|is repeated in"),
        ("TOP006", r"is given but|is not used|unexpected keyword"),
        ("TOP007", r"is not given|cannot infer|have no length|parts have no length"),
        (
            "TOP002",
            r"is missing on the|does not appear in any input|is in no operand|neither in the"
            r"|on one side only|is not in the output|stands for no input",
        ),
        (
            "TOP005",
            r"term\(s\)|takes one term|takes two terms|takes three terms|takes a single term"
            r"|exactly one output term|arrays? were given",
        ),
        ("TOP009", r"anonymous axis"),
        (
            "TOP008",
            r"cannot split|does not match|not divisible|has length|has lengths|dimension\(s\) but"
            r"|axes but the input|add up to|take \d",
        ),
        (
            "TOP011",
            r"is not allowed in (?!einsum)|patterns hold|must be in brackets|is allowed only"
            r"|supported by rearrange and einsum only|brackets are not allowed|coordinate axis",
        ),
    )
)


def code_of(reason: str) -> str:
    """The code of a run-time error by its reason; ``TOP001`` (syntax) when no rule names it.

    Examples:
        >>> code_of("axis 'w' is missing on the right")
        'TOP002'
        >>> code_of("unclosed parenthesis")
        'TOP001'
    """
    for code, words in _READERS:
        if words.search(reason):
            return code
    return "TOP001"


def is_code(text: str) -> bool:
    """Whether `text` is one of the codes."""
    return text in _CODES
