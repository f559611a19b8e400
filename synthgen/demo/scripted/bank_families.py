"""The scripted brain's bank: 12 problem families x 5 difficulty levels, each a real Python function.

`<family>_<level>` is a self-contained function whose docstring is the hint the teacher gives with it;
`@examples` above it lists its six example inputs. The brain sends its source (renamed to `f`, without the
hint) as the teacher's code and calls it in-process to know gold values (synthgen.demo.scripted.bank_problems
turns a level into a problem for any environment). Rules for adding one: imports inside the body, no recursion
through its own name, no mutation of arguments, deterministic, and fast on every listed input.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Level:
    """One difficulty level of a family: the function (its docstring is the hint) and its example inputs."""

    func: Callable
    inputs: tuple[str, ...]  # argument lists as prompts show them (`3, [1, 2]`)

    @property
    def message(self) -> str:
        return " ".join((self.func.__doc__ or "").split())

    @property
    def params(self) -> list[str]:
        return list(inspect.signature(self.func).parameters)

    def source(self, name: str = "f") -> str:
        """The function's code as the teacher writes it: renamed, without `@examples` and the hint."""
        lines = textwrap.dedent(inspect.getsource(self.func)).strip("\n").split("\n")
        node = ast.parse("\n".join(lines)).body[0]
        hint = node.body[0]
        text = "\n".join(lines[node.lineno - 1 : hint.lineno - 1] + lines[hint.end_lineno :])
        return re.sub(rf"^def {self.func.__name__}\(", f"def {name}(", text, count=1)

    def run(self, args_text: str) -> Any:
        """The real function on an argument list (literal_eval of our own literals)."""
        return self.func(*literal_args(args_text))


def literal_args(text: str) -> list:
    return list(ast.literal_eval(f"({text},)"))


BANK: dict[str, Level] = {}  # "<family>_<level>" -> its Level


def examples(*values: Any) -> Callable[[Callable], Callable]:
    """Register a level with its six example inputs (a tuple of arguments where it takes several)."""

    def register(func: Callable) -> Callable:
        several = len(inspect.signature(func).parameters) > 1
        BANK[func.__name__] = Level(func, tuple(", ".join(map(repr, v if several else (v,))) for v in values))
        return func

    return register


# -- whole numbers: digits, primes, coins ----------------------------------------


@examples(123, 4071, 99, 5, 1000, 86)
def digits_1(n):
    """Add up the decimal digits of the number."""
    return sum(int(c) for c in str(abs(n)))


@examples(12, 305, 7, 99, 1111, 240)
def digits_2(n):
    """Square every decimal digit of the number and add the squares up."""
    return sum(int(c) ** 2 for c in str(abs(n)))


@examples(121, 918, 5, 1000, 4736, 90)
def digits_3(n):
    """Walk over the digits from the last one to the first, adding and subtracting them in turn (the last digit is
    added)."""
    total, sign = 0, 1
    for c in reversed(str(abs(n))):
        total += sign * int(c)
        sign = -sign
    return total


@examples(39, 999, 7, 25, 77, 10)
def digits_4(n):
    """Count how many times you must replace the number by the product of its digits before it has a single digit."""
    steps = 0
    while n >= 10:
        product = 1
        for c in str(n):
            product *= int(c)
        n = product
        steps += 1
    return steps


@examples(7, 19, 4, 1, 23, 20)
def digits_5(n):
    """Repeatedly replace the number by the sum of the squares of its digits. Count the steps until it becomes 1, or
    give -1 if it starts repeating first."""
    seen = set()
    steps = 0
    while n != 1:
        if n in seen:
            return -1
        seen.add(n)
        n = sum(int(c) ** 2 for c in str(n))
        steps += 1
    return steps


@examples(2, 15, 17, 1, 91, 97)
def primes_1(n):
    """Is the number prime?"""
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


@examples(10, 2, 1, 30, 100, 13)
def primes_2(n):
    """How many primes are there that are not larger than the number?"""
    if n < 2:
        return 0
    sieve = [True] * (n + 1)
    sieve[0] = sieve[1] = False
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            for j in range(i * i, n + 1, i):
                sieve[j] = False
    return sum(sieve)


@examples(12, 7, 1, 360, 97, 1001)
def primes_3(n):
    """List the prime factors of the number from smallest to largest, repeating a factor as often as it divides."""
    factors = []
    d = 2
    while d * d <= n:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
    if n > 1:
        factors.append(n)
    return factors


@examples(12, 7, 1, 36, 100, 97)
def primes_4(n):
    """How many positive divisors does the number have?"""
    count = 0
    d = 1
    while d * d <= n:
        if n % d == 0:
            count += 1 if d * d == n else 2
        d += 1
    return count


@examples(1, 2, 5, 10, 25, 50)
def primes_5(n):
    """Give the n-th prime number, counting 2 as the first."""
    found = 0
    candidate = 1
    while found < n:
        candidate += 1
        if all(candidate % d for d in range(2, int(candidate**0.5) + 1)):
            found += 1
    return candidate


@examples(1, 2, 3, 5, 10, 0)
def coins_1(n):
    """In how many ways can you climb n stairs taking one or two stairs at a time?"""
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@examples((4, [1, 2]), (4, [1, 3]), (5, [2]), (6, [2]), (7, [1, 2, 3]), (3, [5]))
def coins_2(n, steps):
    """In how many ordered ways can you climb n stairs when each move covers one of the allowed step sizes?"""
    ways = [1] + [0] * n
    for i in range(1, n + 1):
        ways[i] = sum(ways[i - s] for s in steps if s <= i)
    return ways[n]


@examples((11, [1, 2, 5]), (3, [2]), (0, [1]), (7, [2, 3]), (12, [1, 6, 9]), (10, [10]))
def coins_3(amount, coins):
    """What is the smallest number of coins (any number of each kind) that add up to the amount? Give -1 if none do."""
    best = [0] + [None] * amount
    for a in range(1, amount + 1):
        options = [best[a - c] for c in coins if c <= a and best[a - c] is not None]
        best[a] = min(options) + 1 if options else None
    return -1 if best[amount] is None else best[amount]


@examples((5, [1, 2, 5]), (3, [2]), (0, [7]), (10, [10]), (8, [2, 3, 5]), (12, [1, 6, 9]))
def coins_4(amount, coins):
    """In how many ways can the amount be paid with the coin kinds, where the order of coins does not matter?"""
    ways = [1] + [0] * amount
    for c in coins:
        for a in range(c, amount + 1):
            ways[a] += ways[a - c]
    return ways[amount]


@examples(("abcde", "ace"), ("abc", "abc"), ("abc", "def"), ("", "abc"), ("stone", "longest"), ("aggtab", "gxtxayb"))
def coins_5(a, b):
    """How long is the longest sequence of characters that appears, in order but not necessarily side by side, in
    both texts?"""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


# -- strings: text, brackets, words, cipher ----------------------------------------


@examples("banana", "sky", "Education", "aeiou", "rhythm and blues", "Queue")
def text_1(s):
    """Count the vowels in the text, upper or lower case."""
    return sum(1 for c in s.lower() if c in "aeiou")


@examples("banana", "sky", "Education", "Hello, World", "queue it up", "AEIOUxyz")
def text_2(s):
    """Drop every vowel from the text and keep everything else as it is."""
    return "".join(c for c in s if c.lower() not in "aeiou")


@examples("hello", "sky", "Education", "leetcode", "a man a plan", "Ui")
def text_3(s):
    """Keep every consonant and symbol in place but put the vowels back in reverse order."""
    vowels = [c for c in s if c.lower() in "aeiou"]
    out = []
    for c in s:
        out.append(vowels.pop() if c.lower() in "aeiou" else c)
    return "".join(out)


@examples("abcabcbb", "bbbb", "", "pwwkew", "dvdf", "abcdefg")
def text_4(s):
    """Find the length of the longest piece of the text in which no character appears twice."""
    last = {}
    start = best = 0
    for i, c in enumerate(s):
        if c in last and last[c] >= start:
            start = last[c] + 1
        last[c] = i
        best = max(best, i - start + 1)
    return best


@examples("aabcbcdbca", "aaaa", "abbbc", "abcabcbb", "aaabbbccca", "q")
def text_5(s):
    """Find the length of the shortest piece of the text that still contains every distinct character of the whole
    text."""
    need = len(set(s))
    counts = {}
    best, left, have = len(s), 0, 0
    for right, c in enumerate(s):
        counts[c] = counts.get(c, 0) + 1
        if counts[c] == 1:
            have += 1
        while have == need and left <= right:
            best = min(best, right - left + 1)
            d = s[left]
            counts[d] -= 1
            if counts[d] == 0:
                have -= 1
            left += 1
    return best


@examples("(()", "()()", "))(", "(((", "(a)(b))", "")
def brackets_1(s):
    """How many more opening round brackets than closing ones are there?"""
    return s.count("(") - s.count(")")


@examples("(())", "()()()", "((()))(()", "", "(a(b(c)d)e)", "()((()))")
def brackets_2(s):
    """How deeply are the round brackets nested at their deepest point?"""
    depth = best = 0
    for c in s:
        if c == "(":
            depth += 1
            best = max(best, depth)
        elif c == ")":
            depth -= 1
    return best


@examples("([]{})", "(]", "", "{[()()]}", "((", "a(b)c]")
def brackets_3(s):
    """Decide whether all three kinds of brackets in the text open and close in a properly nested way."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for c in s:
        if c in "([{":
            stack.append(c)
        elif c in pairs and (not stack or stack.pop() != pairs[c]):
            return False
    return not stack


@examples("())", "(((", "()", ")(", "()))((", "(()())")
def brackets_4(s):
    """What is the smallest number of round brackets you must insert to make the text balanced?"""
    open_count = inserts = 0
    for c in s:
        if c == "(":
            open_count += 1
        elif open_count:
            open_count -= 1
        else:
            inserts += 1
    return inserts + open_count


@examples("(()", ")()())", "", "()(()", "(()())", "()(())))(")
def brackets_5(s):
    """Find the length of the longest piece of the text that is a balanced sequence of round brackets."""
    stack = [-1]
    best = 0
    for i, c in enumerate(s):
        if c == "(":
            stack.append(i)
        else:
            stack.pop()
            if stack:
                best = max(best, i - stack[-1])
            else:
                stack.append(i)
    return best


@examples("the quick brown fox", "hello", "", "  spaced   out  words ", "a b c d e f", "one two")
def words_1(text):
    """Count the words in the text, where words are separated by any amount of white space."""
    return len(text.split())


@examples("the quick brown fox", "hello", "", "to be or not", "a bb ccc dd", "equal sized words")
def words_2(text):
    """Return the longest word of the text; when several are equally long, the first of them."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


@examples("the quick brown fox", "hello", "", "python IS fun", "a b c", "  two   words ")
def words_3(text):
    """Put the words in reverse order and start each with a capital letter (the rest lower case), separated by
    single spaces."""
    return " ".join(w.capitalize() for w in reversed(text.split()))


@examples("the cat and the hat", "b a b a", "Hello hello HELLO world", "one", "x y z y z", "dog cat Dog CAT cat")
def words_4(text):
    """Which word occurs most often, ignoring case? On a tie take the alphabetically first; answer in lower case."""
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return min(counts, key=lambda w: (-counts[w], w)) if counts else ""


@examples(
    "listen silent enlist google", "a b c", "", "tea eat ate tan nat bat", "Dusty study night thing", "abc cab bca abc"
)
def words_5(text):
    """Group the words that are anagrams of each other (ignoring case) and list the group sizes from largest to
    smallest."""
    groups = {}
    for word in text.lower().split():
        key = "".join(sorted(word))
        groups[key] = groups.get(key, 0) + 1
    return sorted(groups.values(), reverse=True)


@examples(("abc", 1), ("xyz", 3), ("hello world", 13), ("Mixed Case", 2), ("zzz", 26), ("a-b-c", 25))
def cipher_1(text, k):
    """Shift every lower-case letter forward in the alphabet by k places, wrapping from z to a; leave everything
    else alone."""
    return "".join(chr((ord(c) - 97 + k) % 26 + 97) if "a" <= c <= "z" else c for c in text)


@examples(("abc", 1), ("XYZ", 3), ("Hello, World!", 13), ("Mixed Case", 2), ("zzz", 27), ("No Change", 0))
def cipher_2(text, k):
    """Shift every letter forward in the alphabet by k places, wrapping around and keeping upper and lower case."""
    out = []
    for c in text:
        if c.isascii() and c.isalpha():
            base = 65 if c.isupper() else 97
            out.append(chr((ord(c) - base + k) % 26 + base))
        else:
            out.append(c)
    return "".join(out)


@examples(("attack", "lemon"), ("hello", "a"), ("abc def", "bc"), ("zzz", "b"), ("x", "key"), ("keep it up", "ab"))
def cipher_3(text, key):
    """Shift each lower-case letter by the alphabet position (a=0) of the next key letter, cycling through the key
    and using key letters only for text letters."""
    out = []
    i = 0
    for c in text:
        if "a" <= c <= "z":
            shift = ord(key[i % len(key)]) - 97
            out.append(chr((ord(c) - 97 + shift) % 26 + 97))
            i += 1
        else:
            out.append(c)
    return "".join(out)


@examples("aaab", "abc", "", "zzzzzzzzzzzz", "aabbaa", "x")
def cipher_4(text):
    """Replace every run of equal characters by the character followed by the length of the run."""
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{text[i]}{j - i}")
        i = j
    return "".join(out)


@examples("aaab", "abc", "", "zzzzzzzzzzzz", "aabbaa", "aabcccccaaa")
def cipher_5(text):
    """Compress runs of a repeated character into the character and the run length (single characters stay bare),
    but keep the original text unless the result is strictly shorter."""
    parts = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        parts.append(text[i] + (str(j - i) if j - i > 1 else ""))
        i = j
    packed = "".join(parts)
    return packed if len(packed) < len(text) else text


# -- lists: runs, spans (intervals), ops (operation lists) ------------------------------


@examples([1, 2, 3, 4, 5], [3, 2, 1], [1, 5, 2, 6, 3], [4], [2, 2, 3, 3, 4], [1, 3, 2, 4, 3, 5])
def runs_1(xs):
    """Count the places where a list element is bigger than the one right before it."""
    return sum(1 for a, b in zip(xs, xs[1:]) if b > a)


@examples([1, 2, 3, 1, 2], [5, 4, 3], [], [1, 3, 5, 7, 2, 4], [2, 2, 2, 3], [9, 1, 2, 3, 4, 0])
def runs_2(xs):
    """Find the length of the longest stretch of neighbouring elements that keeps strictly rising."""
    if not xs:
        return 0
    best = cur = 1
    for a, b in zip(xs, xs[1:]):
        cur = cur + 1 if b > a else 1
        best = max(best, cur)
    return best


@examples([1, 1, 2, 3, 3, 3], [4, 4, 4, 4], [], [1, 2, 1, 2], [5, 5, 6, 6, 5], [7])
def runs_3(xs):
    """Report, in order, how long each block of equal neighbouring values is."""
    out = []
    for i, x in enumerate(xs):
        if i and xs[i - 1] == x:
            out[-1] += 1
        else:
            out.append(1)
    return out


@examples([1, 2, 3, 1, 2], [5, 4, 3], [1, 3, 2, 4], [2, 2], [9], [0, -1, 5, 6, -2])
def runs_4(xs):
    """Split the list into maximal strictly rising stretches and add up the largest value of each stretch."""
    total = 0
    for i, x in enumerate(xs):
        if i + 1 == len(xs) or xs[i + 1] <= x:
            total += x
    return total


@examples(
    ([1, 3, 6, 7, 9, 2], 2), ([8, 2, 4, 7], 4), ([5, 5, 5], 0), ([1, 10, 2, 9, 3], 8), ([4, 1, 2, 3, 9], 3), ([], 1)
)
def runs_5(xs, k):
    """Find the longest stretch of neighbouring elements whose largest and smallest values differ by at most k."""
    best = 0
    for i in range(len(xs)):
        lo = hi = xs[i]
        for j in range(i, len(xs)):
            lo, hi = min(lo, xs[j]), max(hi, xs[j])
            if hi - lo > k:
                break
            best = max(best, j - i + 1)
    return best


@examples([[1, 3], [2, 5]], [[0, 10]], [], [[4, 4], [1, 2]], [[-3, 3], [0, 1], [5, 9]], [[2, 7], [7, 8]])
def spans_1(spans):
    """Add up the lengths (end minus start) of all the intervals."""
    return sum(b - a for a, b in spans)


@examples(
    [[1, 3], [2, 6], [8, 10]],
    [[1, 4], [4, 5]],
    [],
    [[5, 6], [1, 2]],
    [[1, 10], [2, 3], [4, 8]],
    [[3, 5], [1, 2], [2, 3]],
)
def spans_2(spans):
    """Join the intervals that overlap or touch, and list the joined intervals from left to right."""
    merged = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


@examples([[1, 3], [2, 5]], [[0, 10]], [], [[4, 4], [1, 2]], [[1, 4], [6, 8], [2, 7]], [[2, 7], [7, 8]])
def spans_3(spans):
    """How much of the number line is covered by at least one of the intervals?"""
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


@examples(
    [[1, 3], [2, 5], [4, 6]],
    [[0, 10]],
    [[1, 2], [2, 3]],
    [[1, 5], [2, 6], [3, 7], [8, 9]],
    [],
    [[1, 10], [2, 3], [2, 4], [2, 5]],
)
def spans_4(spans):
    """Treating each interval as including its start but not its end, what is the largest number of intervals that
    cover one point?"""
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], e[1]))
    best = cur = 0
    for _, delta in events:
        cur += delta
        best = max(best, cur)
    return best


@examples(
    [[1, 2], [2, 3], [3, 4], [1, 3]],
    [[1, 2], [1, 2], [1, 2]],
    [[1, 2], [2, 3]],
    [[0, 10], [1, 2], [3, 4], [5, 6]],
    [],
    [[1, 5], [2, 3], [4, 6], [7, 8]],
)
def spans_5(spans):
    """What is the smallest number of intervals to delete so that no two of the rest overlap (touching ends are
    fine)?"""
    removed, end = 0, None
    for a, b in sorted(spans, key=lambda s: (s[1], s[0])):
        if end is not None and a < end:
            removed += 1
        else:
            end = b
    return removed


@examples(["+3", "-2", "+10"], [], ["-5"], ["+1", "+1", "+1", "+1"], ["+100", "-99"], ["-7", "+2", "-1"])
def ops_1(ops):
    """Start from zero and apply each signed change in turn; report the final value."""
    value = 0
    for op in ops:
        value += int(op)
    return value


@examples(
    ["push 3", "push 4", "pop"],
    ["pop"],
    ["push 1", "push 2", "push 3"],
    [],
    ["push 5", "pop", "push 6", "push 7"],
    ["push 9", "pop", "pop"],
)
def ops_2(ops):
    """Run the push and pop commands on an empty stack (a pop on an empty stack does nothing) and return the stack
    from bottom to top."""
    stack = []
    for op in ops:
        if op == "pop":
            if stack:
                stack.pop()
        else:
            stack.append(int(op.split()[1]))
    return stack


@examples(
    ["2", "3", "+"],
    ["4", "2", "-", "5", "*"],
    ["7"],
    ["1", "2", "3", "*", "+"],
    ["5", "1", "2", "+", "4", "*", "+", "3", "-"],
    ["3", "4", "-"],
)
def ops_3(tokens):
    """Evaluate the expression written in postfix order (numbers first, then the operator), using +, - and *."""
    stack = []
    for tok in tokens:
        if tok in ("+", "-", "*"):
            b, a = stack.pop(), stack.pop()
            stack.append(a + b if tok == "+" else a - b if tok == "-" else a * b)
        else:
            stack.append(int(tok))
    return stack[-1]


@examples(
    ["add 5", "add 3", "undo"],
    ["undo"],
    ["add 2", "add 2", "undo", "undo", "add 7"],
    [],
    ["add 10", "add -4", "undo", "add 1"],
    ["add 1", "add 2", "add 3"],
)
def ops_4(ops):
    """Start at zero; each 'add N' adds N and 'undo' cancels the most recent add that has not been cancelled yet.
    Report the final value."""
    history = [0]
    for op in ops:
        if op == "undo":
            if len(history) > 1:
                history.pop()
        else:
            history.append(history[-1] + int(op.split()[1]))
    return history[-1]


@examples("1 + 2 * 3", "(1 + 2) * 3", "7", "10 - 2 - 3", "2 * (3 + 4) * 5", "((8)) - 3 * (2 - 5)")
def ops_5(expr):
    """Evaluate the arithmetic expression with +, - and * on whole numbers, respecting brackets and the usual
    precedence."""
    for symbol in "()+-*":
        expr = expr.replace(symbol, f" {symbol} ")
    tokens = expr.split()
    pos = 0

    def parse_sum():
        nonlocal pos
        value = parse_product()
        while pos < len(tokens) and tokens[pos] in "+-":
            op = tokens[pos]
            pos += 1
            right = parse_product()
            value = value + right if op == "+" else value - right
        return value

    def parse_product():
        nonlocal pos
        value = parse_atom()
        while pos < len(tokens) and tokens[pos] == "*":
            pos += 1
            value *= parse_atom()
        return value

    def parse_atom():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            value = parse_sum()
            pos += 1
            return value
        return int(tok)

    return parse_sum()


# -- two-dimensional data: grid, matrix ----------------------------------------


@examples(["#..", ".#.", "..#"], ["...."], ["##", "##"], ["#.#.#", "....."], ["."], [".#", "#.", "##"])
def grid_1(rows):
    """Count the wall cells, drawn as '#', in the grid."""
    return sum(row.count("#") for row in rows)


@examples((1, 1), (2, 2), (3, 2), (0, 5), (4, 4), (2, 5))
def grid_2(r, c):
    """Count the shortest paths along grid lines between opposite corners of an r by c block."""
    import math

    return math.comb(r + c, r)


@examples(
    ["...", "...", "..."], [".#.", "...", "..."], ["..", "#."], [".#", "#."], ["....", ".#..", "...#", "...."], ["."]
)
def grid_3(rows):
    """Count the ways to walk from the top-left to the bottom-right cell moving only right or down and never
    stepping on '#'."""
    width = len(rows[0])
    ways = [0] * width
    ways[0] = 1 if rows[0][0] == "." else 0
    for row in rows:
        for j, cell in enumerate(row):
            if cell == "#":
                ways[j] = 0
            elif j:
                ways[j] += ways[j - 1]
    return ways[-1]


@examples(
    [[1, 3, 1], [1, 5, 1], [4, 2, 1]],
    [[1, 2], [3, 4]],
    [[5]],
    [[1, 2, 3]],
    [[1], [9], [1]],
    [[9, 1, 1], [1, 1, 9], [1, 9, 1]],
)
def grid_4(grid):
    """Walking from the top-left to the bottom-right cell, moving only right or down, what is the smallest possible
    sum of the cells you visit?"""
    width = len(grid[0])
    best = [0] * width
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if i == 0 and j == 0:
                best[j] = value
            elif i == 0:
                best[j] = best[j - 1] + value
            elif j == 0:
                best[j] = best[j] + value
            else:
                best[j] = min(best[j], best[j - 1]) + value
    return best[-1]


@examples(
    ["11000", "11000", "00100", "00011"],
    ["111", "010", "111"],
    ["000"],
    ["101", "010", "101"],
    ["1"],
    ["1100", "0110", "0011", "1001"],
)
def grid_5(rows):
    """Count the separate groups of '1' cells, where cells belong together if they touch on a side."""
    seen = set()
    islands = 0
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if cell != "1" or (i, j) in seen:
                continue
            islands += 1
            todo = [(i, j)]
            seen.add((i, j))
            while todo:
                a, b = todo.pop()
                for x, y in ((a + 1, b), (a - 1, b), (a, b + 1), (a, b - 1)):
                    if 0 <= x < len(rows) and 0 <= y < len(rows[x]) and rows[x][y] == "1" and (x, y) not in seen:
                        seen.add((x, y))
                        todo.append((x, y))
    return islands


@examples(
    [[1, 2], [3, 4]], [[5]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [], [[2, 9, 9], [9, -3, 9], [9, 9, 7]], [[0, 1], [1, 0]]
)
def matrix_1(m):
    """Add up the numbers on the main diagonal of the square table."""
    return sum(m[i][i] for i in range(len(m)))


@examples([[1, 2], [3, 4]], [[5]], [[1, 2, 3]], [[1], [2], [3]], [[1, 2, 3], [4, 5, 6]], [[0, 0], [1, 1]])
def matrix_2(m):
    """Turn the rows of the table into its columns."""
    return [list(col) for col in zip(*m)]


@examples(
    [[1, 2], [3, 4]], [[5]], [[1, 2, 3]], [[1], [2], [3]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 1], [2, 3], [4, 5]]
)
def matrix_3(m):
    """Rotate the table a quarter turn clockwise."""
    return [list(row) for row in zip(*m[::-1])]


@examples(
    [[1, 2], [3, 4]], [[5]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 3, 4]], [[1], [2], [3]], [[1, 2, 3], [4, 5, 6]]
)
def matrix_4(m):
    """Read the table in a clockwise spiral starting at the top-left corner."""
    out = []
    top, bottom, left, right = 0, len(m) - 1, 0, (len(m[0]) - 1 if m else -1)
    while top <= bottom and left <= right:
        out.extend(m[top][j] for j in range(left, right + 1))
        out.extend(m[i][right] for i in range(top + 1, bottom + 1))
        if top < bottom:
            out.extend(m[bottom][j] for j in range(right - 1, left - 1, -1))
        if left < right:
            out.extend(m[i][left] for i in range(bottom - 1, top, -1))
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return out


@examples(
    [[1, 1], [1, 1]],
    [[0]],
    [[1, 0, 1], [1, 1, 1], [1, 1, 1]],
    [[1, 1, 1], [1, 1, 1], [1, 1, 0]],
    [[0, 1], [1, 0]],
    [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]],
)
def matrix_5(m):
    """How long is the side of the largest square block made only of ones?"""
    best = 0
    width = len(m[0]) if m else 0
    size = [[0] * (width + 1) for _ in range(len(m) + 1)]
    for i, row in enumerate(m, 1):
        for j, cell in enumerate(row, 1):
            if cell == 1:
                size[i][j] = 1 + min(size[i - 1][j], size[i][j - 1], size[i - 1][j - 1])
                best = max(best, size[i][j])
    return best
