"""Canonical, type-tagged text form of plain Python values: the only way values leave a sandbox.

    encode(value) -> str          inside the child: a value -> canonical JSON text (stdlib only)
    decode(text) -> value         in the host: JSON text -> value, validated, never evaluated
    equal(a, b) -> bool           in the host: type-strict, recursive comparison of two encodings
    from_literal(text) -> str     in the host: a Python literal repr -> encoding, never evaluated

Supported: None, bool, int, float (NaN and infinities too), Fraction, str, bytes, list, tuple,
dict (Counter, OrderedDict and defaultdict as dict), set, frozenset, nested up to MAX_DEPTH.
Anything else (a custom `__eq__`, a subclass of int, a generator) is refused with TypeError, so
no object chosen by the code under test survives the trip out of the sandbox.

JSON form: null, true/false, integers, strings and lists stand for themselves; every other type
is a one-key object: {"float": "nan"}, {"int": "0x..."} (too long for decimal), {"bytes": "00ff"},
{"fraction": "0x1/0x3"}, {"tuple": [...]}, {"set": [...]}, {"frozenset": [...]},
{"dict": [[key, value], ...]}. Set elements and dict pairs are sorted by their own encoding, so
one value has exactly one encoding. Equality is Python's `==` except that types must match at
every level (a tuple is not a list, True is not 1, 1.0 is not 1) and NaN equals NaN.

Also imported inside the sandbox as plain `values`: standard library only, no synthgen imports.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter, OrderedDict, defaultdict
from fractions import Fraction

__all__ = ["MAX_DEPTH", "encode", "decode", "equal", "from_literal", "normalize", "display"]

MAX_DEPTH = 100
MAX_LITERAL_CHARS = 16 << 20
# Integers of up to this many bits are written as JSON numbers (well under Python's default
# 4300-digit limit for int <-> decimal text); longer ones in hex, which has no such limit.
_DECIMAL_BITS = 12000
_DICT_TYPES = (dict, Counter, OrderedDict, defaultdict)
_FLOAT_TEXT = re.compile(r"-?(?:nan|inf|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\Z")
_HEX_INT = re.compile(r"-?0x[0-9a-f]+\Z")
_FRACTION = re.compile(r"(-?0x[0-9a-f]+)/(0x[0-9a-f]+)\Z")
_HEX_BYTES = re.compile(r"(?:[0-9a-f]{2})*\Z")
_dump_str = json.encoder.encode_basestring_ascii  # = json.dumps of a str: ASCII-only, lone surrogates survive


def encode(value) -> str:
    """The canonical encoding of `value`; TypeError for an unsupported type, ValueError if too deep."""
    return _enc(value, 0)


def _enc(v, depth: int) -> str:
    t = type(v)
    if t is str:
        return _dump_str(v)
    if t is int:
        return int.__repr__(v) if v.bit_length() <= _DECIMAL_BITS else '{"int":"%s"}' % hex(v)
    if t is bool:
        return "true" if v else "false"
    if v is None:
        return "null"
    if t is float:
        return '{"float":"%s"}' % float.__repr__(v)
    if t is bytes:
        return '{"bytes":"%s"}' % v.hex()
    if t is Fraction:
        return '{"fraction":"%s/%s"}' % (hex(v.numerator), hex(v.denominator))
    if depth >= MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    d = depth + 1
    if t is list:
        return "[" + ",".join([_enc(x, d) for x in v]) + "]"
    if t is tuple:
        return '{"tuple":[' + ",".join([_enc(x, d) for x in v]) + "]}"
    if t in _DICT_TYPES:
        pairs = sorted("[%s,%s]" % (_enc(k, d), _enc(x, d)) for k, x in dict.items(v))
        return '{"dict":[' + ",".join(pairs) + "]}"
    if t is set or t is frozenset:
        items = sorted(_enc(x, d) for x in v)
        return '{"%s":[%s]}' % (t.__name__, ",".join(items))
    raise TypeError(f"cannot encode a value of type {t.__qualname__}")


def _no_float(text: str):
    raise ValueError(f"bare JSON number {text!r}: floats must be tagged")


def _no_constant(text: str):
    raise ValueError(f"JSON constant {text!r} is not allowed")


def _fraction(text: str) -> Fraction:
    num, den = (int(x, 16) for x in _FRACTION.match(text).groups())
    value = Fraction(num, den) if den else None
    if value is None or (value.numerator, value.denominator) != (num, den):
        raise ValueError("a fraction must be in lowest terms with a positive denominator")
    return value


_decoder = json.JSONDecoder(parse_float=_no_float, parse_constant=_no_constant)
# Tags whose body is a str: the pattern it must match and how it is read.
_TEXT_TAGS = {
    "float": (_FLOAT_TEXT, float),
    "int": (_HEX_INT, lambda text: int(text, 16)),
    "bytes": (_HEX_BYTES, bytes.fromhex),
    "fraction": (_FRACTION, _fraction),
}


def decode(text: str):
    """The value an encoding stands for. ValueError on anything that is not a valid encoding."""
    if not isinstance(text, str):
        raise ValueError(f"an encoding is a str, not {type(text).__name__}")
    try:
        raw = _decoder.decode(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not a value encoding: {exc}") from None
    return _dec(raw, 0)


def _dec(x, depth: int):
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if depth >= MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    d = depth + 1
    if t is list:
        return [_dec(e, d) for e in x]
    if t is not dict or len(x) != 1:
        raise ValueError("an object in an encoding must have exactly one type tag")
    ((tag, body),) = x.items()
    if tag in _TEXT_TAGS and type(body) is str and _TEXT_TAGS[tag][0].match(body):
        return _TEXT_TAGS[tag][1](body)
    if type(body) is not list:
        raise ValueError(f"bad body for type tag {tag!r}")
    if tag == "tuple":
        return tuple(_dec(e, d) for e in body)
    if tag not in ("set", "frozenset", "dict"):
        raise ValueError(f"unknown type tag {tag!r}")
    if tag == "dict" and not all(type(p) is list and len(p) == 2 for p in body):
        raise ValueError("dict pairs must be [key, value] lists")
    try:
        if tag == "dict":
            out = {_dec(k, d): _dec(v, d) for k, v in body}
        else:
            out = (set if tag == "set" else frozenset)(_dec(e, d) for e in body)
    except TypeError as exc:  # an unhashable set element or dict key
        raise ValueError(f"bad {tag}: {exc}") from None
    if len(out) != len(body):
        raise ValueError(f"duplicate {'keys' if tag == 'dict' else 'elements'} in a {tag}")
    return out


def normalize(value):
    """A hashable, type-tagged form of a decoded value; equal values give equal forms (1, 1.0 and
    True differ; 0.0 == -0.0; every NaN becomes the same marker)."""
    t = type(value)
    if t is float:
        return ("float", "nan") if value != value else ("float", value)
    if t in (int, bool, str, bytes, Fraction) or value is None:
        return (t.__name__, value)
    if t is list or t is tuple:
        return (t.__name__, tuple(normalize(x) for x in value))
    if t is set or t is frozenset:
        return (t.__name__, frozenset(normalize(x) for x in value))
    if t is dict:
        return ("dict", frozenset((normalize(k), normalize(v)) for k, v in value.items()))
    raise TypeError(f"not a decoded value: {t.__qualname__}")


def equal(a: str, b: str) -> bool:
    """Whether two encodings stand for the same value (type-strict). ValueError if either is invalid."""
    if a == b:
        decode(a)  # validate: the same invalid text twice is still an error
        return True
    return normalize(decode(a)) == normalize(decode(b))


def display(value, limit: int | None = None) -> str:
    """`repr` of a decoded value for people; never fails (huge ints shown in hex)."""
    try:
        text = repr(value)
    except ValueError:  # an int over Python's decimal-conversion limit
        text = "<value too large to show in decimal; see its encoding>"
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit} more chars]"
    return text


def from_literal(text: str) -> str:
    """Encode the value a Python literal repr denotes, e.g. "[1, (2, 'a')]" or "float('nan')": what
    `repr` prints for supported values, `set()`, `frozenset(...)`, bare `nan`/`inf`. ValueError on
    anything else; nothing is evaluated."""
    if not isinstance(text, str):
        raise ValueError(f"a literal is a str, not {type(text).__name__}")
    if len(text) > MAX_LITERAL_CHARS:
        raise ValueError(f"literal longer than {MAX_LITERAL_CHARS} characters")
    quick = _printed_by_repr(text)
    if quick is not None:
        return quick
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not a Python literal: {exc}") from None
    try:
        return encode(_literal(tree.body, 0))
    except RecursionError:
        raise ValueError("literal nested too deeply") from None
    except TypeError as exc:  # unhashable set element or dict key
        raise ValueError(f"not a valid literal: {exc}") from None


def _printed_by_repr(text: str) -> str | None:
    """The encoding of `text` when it is exactly what `repr` prints for a str, a number or a list of
    them (what the loaders write), else None: a cheap reading (json, or the str's escapes) whose
    repr gives back `text` is the literal's value, as `repr` is exact for these types."""
    first = text[:1]
    try:
        if first in ("'", '"'):
            value = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        elif first == "[" or first.isdigit() or first == "-":
            value = json.loads(text)
        else:
            return None
        return encode(value) if repr(value) == text else None
    except Exception:  # noqa: BLE001 (anything odd, a warning made an error included: the full parse decides)
        return None


def _literal(node, depth: int):
    if depth > MAX_DEPTH:
        raise ValueError(f"literal nested deeper than {MAX_DEPTH} levels")
    d = depth + 1
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None or type(v) in (bool, int, float, str, bytes):
            return v
        raise ValueError(f"unsupported constant {v!r}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand, d)
        if type(v) not in (int, float):
            raise ValueError("a sign applies to numbers only")
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return float(node.id)
    if isinstance(node, ast.List):
        return [_literal(e, d) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, d) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_literal(e, d) for e in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("'**' in a dict literal")
        return {_literal(k, d): _literal(v, d) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        return _literal_call(node.func.id, node.args, d)
    raise ValueError(f"not a literal: {ast.dump(node)[:80]}")


def _literal_call(name: str, args: list, depth: int):
    if name in ("set", "frozenset") and len(args) <= 1:
        items = _literal(args[0], depth) if args else ()
        if type(items) not in (list, tuple, set, frozenset):
            raise ValueError(f"{name}() takes a list, tuple or set literal")
        return set(items) if name == "set" else frozenset(items)
    if name == "float" and len(args) == 1 and isinstance(args[0], ast.Constant) and type(args[0].value) is str:
        return float(args[0].value)  # (ValueError when the text is not a number)
    raise ValueError(f"call to {name}() is not a literal")
