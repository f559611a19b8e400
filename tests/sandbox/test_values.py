"""The canonical value encoding: round trips, type-strict equality, and literal parsing without eval."""

from __future__ import annotations

import ast
import math
import random
from collections import Counter, OrderedDict, defaultdict

import pytest

from synthgen.sandbox import values

SAMPLES = [
    None,
    True,
    False,
    0,
    -1,
    2**64,
    -(2**70),
    7**20000,
    1.5,
    -0.0,
    float("inf"),
    float("-inf"),
    5e-324,
    "",
    "héllo\n\"'",
    "\ud800",
    b"",
    b"\x00\xff",
    [],
    [1, [2, [3]]],
    (),
    (1,),
    ((1, 2), [3]),
    {},
    {1: "a", "b": (2,), (3, 4): [5]},
    set(),
    {1, 2, "x", (1, 2)},
    frozenset(),
    frozenset({1, frozenset({2})}),
    {frozenset({1}): {2: {3}}},
]


@pytest.mark.parametrize("value", SAMPLES, ids=lambda v: type(v).__name__)
def test_round_trip(value):
    text = values.encode(value)
    back = values.decode(text)
    assert type(back) is type(value)
    assert values.encode(back) == text
    assert values.equal(text, values.encode(back))


def test_nan_round_trips_and_equals_nan():
    text = values.encode(float("nan"))
    assert math.isnan(values.decode(text))
    assert values.equal(text, values.encode(float("nan")))
    assert values.equal(values.encode([float("nan")]), values.encode([float("nan")]))


def test_encoding_is_canonical_for_sets_and_dicts():
    assert values.encode({3, 1, 2}) == values.encode({2, 3, 1})
    assert values.encode({"b": 1, "a": 2}) == values.encode({"a": 2, "b": 1})


@pytest.mark.parametrize(
    "a, b",
    [
        ((1, 2), [1, 2]),
        (True, 1),
        (1, 1.0),
        (False, 0),
        ({1}, frozenset({1})),
        ({1: 2}, [(1, 2)]),
        ("1", 1),
        (b"a", "a"),
        ([True], [1]),
        ({True: 1}, {1: 1}),
        (None, 0),
    ],
)
def test_equality_is_type_strict(a, b):
    assert not values.equal(values.encode(a), values.encode(b))


def test_equality_follows_python_for_zero_and_dict_order():
    assert values.equal(values.encode(0.0), values.encode(-0.0))
    assert values.equal(values.encode({1: 2, 3: 4}), '{"dict":[[3,4],[1,2]]}')  # unsorted input still equal
    assert not values.equal(values.encode(0.1 + 0.2), values.encode(0.3))


def test_dict_likes_encode_as_dict():
    for d in (Counter("aab"), OrderedDict(a=2, b=1), defaultdict(int, a=2, b=1)):
        assert values.encode(d) == values.encode({"a": 2, "b": 1})


@pytest.mark.parametrize("value", [object(), 1j, range(3), iter([]), type, print, Ellipsis])
def test_unsupported_types_are_refused(value):
    with pytest.raises(TypeError):
        values.encode(value)


def test_subclasses_of_supported_types_are_refused():
    class Sneaky(int):
        def __eq__(self, other):
            return True

    class MyList(list):
        pass

    for value in (Sneaky(1), MyList(), [Sneaky(2)]):
        with pytest.raises(TypeError):
            values.encode(value)


def test_self_reference_and_depth_are_refused():
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError):
        values.encode(loop)
    deep = '{"tuple":' * 5000 + "[]" + "}" * 5000
    with pytest.raises(ValueError):
        values.decode(deep)
    with pytest.raises(ValueError):
        values.decode("[" * 100000 + "]" * 100000)


@pytest.mark.parametrize(
    "text",
    [
        "1.5",
        "NaN",
        "Infinity",
        '{"float":"1.5","x":1}',
        '{"float":"1.5.2"}',
        '{"float":"__import__"}',
        '{"int":"12"}',
        '{"bytes":"zz"}',
        '{"set":[[1]]}',
        '{"dict":[[[1],2]]}',
        '{"dict":[[1,2],[1,3]]}',
        '{"set":[1,1]}',
        '{"object":[]}',
        "",
        "[1,",
        "'a'",
        "foo",
        '{"tuple":5}',
        b"1",
    ],
)
def test_decode_rejects_non_encodings(text):
    with pytest.raises(ValueError):
        values.decode(text)


@pytest.mark.parametrize(
    "literal, value",
    [
        ("[1, (2, 'a')]", [1, (2, "a")]),
        ("float('nan')", float("nan")),
        ("{1: 'x'}", {1: "x"}),
        ("-3", -3),
        ("set()", set()),
        ("frozenset({1, 2})", frozenset({1, 2})),
        ("inf", float("inf")),
        ("-inf", float("-inf")),
        ("nan", float("nan")),
        ("(1,)", (1,)),
        ("b'\\x00'", b"\x00"),
        ("True", True),
        ("None", None),
        ("{'a': [1.5, -2.0]}", {"a": [1.5, -2.0]}),
        ("  42  ", 42),
        ("{(1, 2), 3}", {(1, 2), 3}),
        ("float('-inf')", float("-inf")),
        ("'a' 'b'", "ab"),
        ("+5", 5),
        ("-0.0", -0.0),
    ],
)
def test_from_literal(literal, value):
    assert values.equal(values.from_literal(literal), values.encode(value))


@pytest.mark.parametrize(
    "literal",
    [
        "__import__('os').system('true')",
        "f(1)",
        "x",
        "1 + 2",
        "[i for i in range(3)]",
        "1j",
        "...",
        "{**a}",
        "lambda: 1",
        "open('/etc/passwd')",
        "set([1], 2)",
        "float(1)",
        "float('x')",
        "{[1]: 2}",
        "{[1]}",
        "-'a'",
        "(1",
        "",
        "a.b",
        "f'{1}'",
        "tuple()",
        "print",
    ],
)
def test_from_literal_rejects_non_literals(literal):
    with pytest.raises(ValueError):
        values.from_literal(literal)


def test_display_never_fails_on_huge_ints():
    import sys

    digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)  # the interpreter's default, whatever an earlier test set
    try:
        assert "too large" in values.display(7**20000)
    finally:
        sys.set_int_max_str_digits(digits)
    assert values.display("x" * 50, limit=10) == "'xxxxxxxxx... [42 more chars]"


def _parsed(text):
    """from_literal's full reading (a parse tree), for comparison with its quick one."""
    return values.encode(values._literal(ast.parse(text.strip(), mode="eval").body, 0))


@pytest.mark.parametrize(
    "text",
    [
        '"\\/"',
        "'\\q'",
        "[1,2]",
        "-0",
        "1e5",
        "1.5",
        "-2.5e-07",
        '{"a": 1}',
        "'\\ud800'",
        '"it\'s"',
        "'a' ",
        "[1, 'x\\ny', [2.0, -3], []]",
        "'\\N{BULLET}'",
        "'\\x41'",
        "'é\\té'",
        "[True, None]",
        "'''a'''",
        '"a" "b"',
        "'a' + 'b'",
        "[1, 2,]",
        "[-1, 0x10]",
        "'\\U0001F600'",
        "'😀'",
        "10" * 40,
        "[" * 300 + "]" * 300,
    ],
)
def test_from_literal_reads_exactly_what_the_full_parse_reads(text):
    try:
        want = _parsed(text)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        with pytest.raises(ValueError):
            values.from_literal(text)
        return
    assert values.from_literal(text) == want


def test_from_literal_of_any_repr_equals_the_full_parse():
    rng = random.Random(7)
    alphabet = "ab'\"\\\n\t\x00\x7f\xe9\u2022\ud800\U0001f600 0"

    def value(depth):
        kind = rng.randrange(6 if depth < 4 else 4)
        if kind == 0:
            return rng.randint(-(10**30), 10**30)
        if kind == 1:
            return rng.choice([0.1, -0.0, 1e300, 2.5e-9, float(rng.randint(-99, 99))])
        if kind in (2, 3):
            return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    for _ in range(3000):
        text = repr(value(0))
        assert values.from_literal(text) == _parsed(text), text
