"""Problem families of the scripted brain's bank on lists: runs, spans (intervals), ops (operation lists).

Each family is five levels (synthgen.demo.scripted.bank_level.Level), from easy to hard. Each function is
a real, self-contained Python function: the brain sends its source (renamed to `f`) as the
teacher's code and calls it in-process to know gold values. Rules for adding one: imports inside
the body, no recursion through its own name, no mutation of arguments, deterministic, and fast
on every listed input.
"""

from __future__ import annotations

from synthgen.demo.scripted.bank_level import Level


def runs_1(xs):
    return sum(1 for a, b in zip(xs, xs[1:]) if b > a)


def runs_2(xs):
    if not xs:
        return 0
    best = cur = 1
    for a, b in zip(xs, xs[1:]):
        cur = cur + 1 if b > a else 1
        best = max(best, cur)
    return best


def runs_3(xs):
    out = []
    for i, x in enumerate(xs):
        if i and xs[i - 1] == x:
            out[-1] += 1
        else:
            out.append(1)
    return out


def runs_4(xs):
    total = 0
    for i, x in enumerate(xs):
        if i + 1 == len(xs) or xs[i + 1] <= x:
            total += x
    return total


def runs_5(xs, k):
    best = 0
    for i in range(len(xs)):
        lo = hi = xs[i]
        for j in range(i, len(xs)):
            lo, hi = min(lo, xs[j]), max(hi, xs[j])
            if hi - lo > k:
                break
            best = max(best, j - i + 1)
    return best


def spans_1(spans):
    return sum(b - a for a, b in spans)


def spans_2(spans):
    merged = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def spans_3(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def spans_4(spans):
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], e[1]))
    best = cur = 0
    for _, delta in events:
        cur += delta
        best = max(best, cur)
    return best


def spans_5(spans):
    removed, end = 0, None
    for a, b in sorted(spans, key=lambda s: (s[1], s[0])):
        if end is not None and a < end:
            removed += 1
        else:
            end = b
    return removed


def ops_1(ops):
    value = 0
    for op in ops:
        value += int(op)
    return value


def ops_2(ops):
    stack = []
    for op in ops:
        if op == "pop":
            if stack:
                stack.pop()
        else:
            stack.append(int(op.split()[1]))
    return stack


def ops_3(tokens):
    stack = []
    for tok in tokens:
        if tok in ("+", "-", "*"):
            b, a = stack.pop(), stack.pop()
            stack.append(a + b if tok == "+" else a - b if tok == "-" else a * b)
        else:
            stack.append(int(tok))
    return stack[-1]


def ops_4(ops):
    history = [0]
    for op in ops:
        if op == "undo":
            if len(history) > 1:
                history.pop()
        else:
            history.append(history[-1] + int(op.split()[1]))
    return history[-1]


def ops_5(expr):
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


FAMILIES = {
    "runs": [
        Level(
            runs_1,
            ("[1, 2, 3, 4, 5]", "[3, 2, 1]", "[1, 5, 2, 6, 3]", "[4]", "[2, 2, 3, 3, 4]", "[1, 3, 2, 4, 3, 5]"),
            "Count the places where a list element is bigger than the one right before it.",
        ),
        Level(
            runs_2,
            ("[1, 2, 3, 1, 2]", "[5, 4, 3]", "[]", "[1, 3, 5, 7, 2, 4]", "[2, 2, 2, 3]", "[9, 1, 2, 3, 4, 0]"),
            "Find the length of the longest stretch of neighbouring elements that keeps strictly rising.",
        ),
        Level(
            runs_3,
            ("[1, 1, 2, 3, 3, 3]", "[4, 4, 4, 4]", "[]", "[1, 2, 1, 2]", "[5, 5, 6, 6, 5]", "[7]"),
            "Report, in order, how long each block of equal neighbouring values is.",
        ),
        Level(
            runs_4,
            ("[1, 2, 3, 1, 2]", "[5, 4, 3]", "[1, 3, 2, 4]", "[2, 2]", "[9]", "[0, -1, 5, 6, -2]"),
            "Split the list into maximal strictly rising stretches and add up the largest value of each stretch.",
        ),
        Level(
            runs_5,
            (
                "[1, 3, 6, 7, 9, 2], 2",
                "[8, 2, 4, 7], 4",
                "[5, 5, 5], 0",
                "[1, 10, 2, 9, 3], 8",
                "[4, 1, 2, 3, 9], 3",
                "[], 1",
            ),
            "Find the longest stretch of neighbouring elements whose largest and smallest values differ by at most k.",
        ),
    ],
    "spans": [
        Level(
            spans_1,
            (
                "[[1, 3], [2, 5]]",
                "[[0, 10]]",
                "[]",
                "[[4, 4], [1, 2]]",
                "[[-3, 3], [0, 1], [5, 9]]",
                "[[2, 7], [7, 8]]",
            ),
            "Add up the lengths (end minus start) of all the intervals.",
        ),
        Level(
            spans_2,
            (
                "[[1, 3], [2, 6], [8, 10]]",
                "[[1, 4], [4, 5]]",
                "[]",
                "[[5, 6], [1, 2]]",
                "[[1, 10], [2, 3], [4, 8]]",
                "[[3, 5], [1, 2], [2, 3]]",
            ),
            "Join the intervals that overlap or touch, and list the joined intervals from left to right.",
        ),
        Level(
            spans_3,
            ("[[1, 3], [2, 5]]", "[[0, 10]]", "[]", "[[4, 4], [1, 2]]", "[[1, 4], [6, 8], [2, 7]]", "[[2, 7], [7, 8]]"),
            "How much of the number line is covered by at least one of the intervals?",
        ),
        Level(
            spans_4,
            (
                "[[1, 3], [2, 5], [4, 6]]",
                "[[0, 10]]",
                "[[1, 2], [2, 3]]",
                "[[1, 5], [2, 6], [3, 7], [8, 9]]",
                "[]",
                "[[1, 10], [2, 3], [2, 4], [2, 5]]",
            ),
            "Treating each interval as including its start but not its end, what is the largest number of intervals "
            "that cover one point?",
        ),
        Level(
            spans_5,
            (
                "[[1, 2], [2, 3], [3, 4], [1, 3]]",
                "[[1, 2], [1, 2], [1, 2]]",
                "[[1, 2], [2, 3]]",
                "[[0, 10], [1, 2], [3, 4], [5, 6]]",
                "[]",
                "[[1, 5], [2, 3], [4, 6], [7, 8]]",
            ),
            "What is the smallest number of intervals to delete so that no two of the rest overlap (touching ends are "
            "fine)?",
        ),
    ],
    "ops": [
        Level(
            ops_1,
            (
                "['+3', '-2', '+10']",
                "[]",
                "['-5']",
                "['+1', '+1', '+1', '+1']",
                "['+100', '-99']",
                "['-7', '+2', '-1']",
            ),
            "Start from zero and apply each signed change in turn; report the final value.",
        ),
        Level(
            ops_2,
            (
                "['push 3', 'push 4', 'pop']",
                "['pop']",
                "['push 1', 'push 2', 'push 3']",
                "[]",
                "['push 5', 'pop', 'push 6', 'push 7']",
                "['push 9', 'pop', 'pop']",
            ),
            "Run the push and pop commands on an empty stack (a pop on an empty stack does nothing) and return the "
            "stack from bottom to top.",
        ),
        Level(
            ops_3,
            (
                "['2', '3', '+']",
                "['4', '2', '-', '5', '*']",
                "['7']",
                "['1', '2', '3', '*', '+']",
                "['5', '1', '2', '+', '4', '*', '+', '3', '-']",
                "['3', '4', '-']",
            ),
            "Evaluate the expression written in postfix order (numbers first, then the operator), using +, - and *.",
        ),
        Level(
            ops_4,
            (
                "['add 5', 'add 3', 'undo']",
                "['undo']",
                "['add 2', 'add 2', 'undo', 'undo', 'add 7']",
                "[]",
                "['add 10', 'add -4', 'undo', 'add 1']",
                "['add 1', 'add 2', 'add 3']",
            ),
            "Start at zero; each 'add N' adds N and 'undo' cancels the most recent add that has not been cancelled "
            "yet. Report the final value.",
        ),
        Level(
            ops_5,
            ("'1 + 2 * 3'", "'(1 + 2) * 3'", "'7'", "'10 - 2 - 3'", "'2 * (3 + 4) * 5'", "'((8)) - 3 * (2 - 5)'"),
            "Evaluate the arithmetic expression with +, - and * on whole numbers, respecting brackets and the usual "
            "precedence.",
        ),
    ],
}
