"""Problem families 1-6 of the scripted brain's bank (see synthgen.scripted.bank_problems).

Each function is a real, self-contained Python function: the brain sends its source (renamed
to `f`) as the teacher's code and calls it in-process to know gold values. Rules for adding
one: imports inside the body, no recursion through its own name, no mutation of arguments,
deterministic, and fast on every listed input.
"""

from __future__ import annotations

from synthgen.scripted.bank_problems import Level


def digits_1(n):
    return sum(int(c) for c in str(abs(n)))


def digits_2(n):
    return sum(int(c) ** 2 for c in str(abs(n)))


def digits_3(n):
    total, sign = 0, 1
    for c in reversed(str(abs(n))):
        total += sign * int(c)
        sign = -sign
    return total


def digits_4(n):
    steps = 0
    while n >= 10:
        product = 1
        for c in str(n):
            product *= int(c)
        n = product
        steps += 1
    return steps


def digits_5(n):
    seen = set()
    steps = 0
    while n != 1:
        if n in seen:
            return -1
        seen.add(n)
        n = sum(int(c) ** 2 for c in str(n))
        steps += 1
    return steps


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


def text_1(s):
    return sum(1 for c in s.lower() if c in "aeiou")


def text_2(s):
    return "".join(c for c in s if c.lower() not in "aeiou")


def text_3(s):
    vowels = [c for c in s if c.lower() in "aeiou"]
    out = []
    for c in s:
        out.append(vowels.pop() if c.lower() in "aeiou" else c)
    return "".join(out)


def text_4(s):
    last = {}
    start = best = 0
    for i, c in enumerate(s):
        if c in last and last[c] >= start:
            start = last[c] + 1
        last[c] = i
        best = max(best, i - start + 1)
    return best


def text_5(s):
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


def brackets_1(s):
    return s.count("(") - s.count(")")


def brackets_2(s):
    depth = best = 0
    for c in s:
        if c == "(":
            depth += 1
            best = max(best, depth)
        elif c == ")":
            depth -= 1
    return best


def brackets_3(s):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for c in s:
        if c in "([{":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
    return not stack


def brackets_4(s):
    open_count = inserts = 0
    for c in s:
        if c == "(":
            open_count += 1
        elif open_count:
            open_count -= 1
        else:
            inserts += 1
    return inserts + open_count


def brackets_5(s):
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


def grid_1(rows):
    return sum(row.count("#") for row in rows)


def grid_2(r, c):
    import math

    return math.comb(r + c, r)


def grid_3(rows):
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


def grid_4(grid):
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


def grid_5(rows):
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


FAMILIES = {
    "digits": [
        Level(digits_1, ("123", "4071", "99", "5", "1000", "86"), "Add up the decimal digits of the number."),
        Level(digits_2, ("12", "305", "7", "99", "1111", "240"), "Square every decimal digit of the number and add the squares up."),
        Level(digits_3, ("121", "918", "5", "1000", "4736", "90"),
              "Walk over the digits from the last one to the first, adding and subtracting them in turn (the last digit is added)."),
        Level(digits_4, ("39", "999", "7", "25", "77", "10"),
              "Count how many times you must replace the number by the product of its digits before it has a single digit."),
        Level(digits_5, ("7", "19", "4", "1", "23", "20"),
              "Repeatedly replace the number by the sum of the squares of its digits. Count the steps until it becomes 1, or give -1 if it starts repeating first."),
    ],
    "runs": [
        Level(runs_1, ("[1, 2, 3, 4, 5]", "[3, 2, 1]", "[1, 5, 2, 6, 3]", "[4]", "[2, 2, 3, 3, 4]", "[1, 3, 2, 4, 3, 5]"),
              "Count the places where a list element is bigger than the one right before it."),
        Level(runs_2, ("[1, 2, 3, 1, 2]", "[5, 4, 3]", "[]", "[1, 3, 5, 7, 2, 4]", "[2, 2, 2, 3]", "[9, 1, 2, 3, 4, 0]"),
              "Find the length of the longest stretch of neighbouring elements that keeps strictly rising."),
        Level(runs_3, ("[1, 1, 2, 3, 3, 3]", "[4, 4, 4, 4]", "[]", "[1, 2, 1, 2]", "[5, 5, 6, 6, 5]", "[7]"),
              "Report, in order, how long each block of equal neighbouring values is."),
        Level(runs_4, ("[1, 2, 3, 1, 2]", "[5, 4, 3]", "[1, 3, 2, 4]", "[2, 2]", "[9]", "[0, -1, 5, 6, -2]"),
              "Split the list into maximal strictly rising stretches and add up the largest value of each stretch."),
        Level(runs_5, ("[1, 3, 6, 7, 9, 2], 2", "[8, 2, 4, 7], 4", "[5, 5, 5], 0", "[1, 10, 2, 9, 3], 8", "[4, 1, 2, 3, 9], 3", "[], 1"),
              "Find the longest stretch of neighbouring elements whose largest and smallest values differ by at most k."),
    ],
    "text": [
        Level(text_1, ("'banana'", "'sky'", "'Education'", "'aeiou'", "'rhythm and blues'", "'Queue'"),
              "Count the vowels in the text, upper or lower case."),
        Level(text_2, ("'banana'", "'sky'", "'Education'", "'Hello, World'", "'queue it up'", "'AEIOUxyz'"),
              "Drop every vowel from the text and keep everything else as it is."),
        Level(text_3, ("'hello'", "'sky'", "'Education'", "'leetcode'", "'a man a plan'", "'Ui'"),
              "Keep every consonant and symbol in place but put the vowels back in reverse order."),
        Level(text_4, ("'abcabcbb'", "'bbbb'", "''", "'pwwkew'", "'dvdf'", "'abcdefg'"),
              "Find the length of the longest piece of the text in which no character appears twice."),
        Level(text_5, ("'aabcbcdbca'", "'aaaa'", "'abbbc'", "'abcabcbb'", "'aaabbbccca'", "'q'"),
              "Find the length of the shortest piece of the text that still contains every distinct character of the whole text."),
    ],
    "brackets": [
        Level(brackets_1, ("'(()'", "'()()'", "'))('", "'((('", "'(a)(b))'", "''"),
              "How many more opening round brackets than closing ones are there?"),
        Level(brackets_2, ("'(())'", "'()()()'", "'((()))(()'", "''", "'(a(b(c)d)e)'", "'()((()))'"),
              "How deeply are the round brackets nested at their deepest point?"),
        Level(brackets_3, ("'([]{})'", "'(]'", "''", "'{[()()]}'", "'(('", "'a(b)c]'"),
              "Decide whether all three kinds of brackets in the text open and close in a properly nested way."),
        Level(brackets_4, ("'())'", "'((('", "'()'", "')('", "'()))(('", "'(()())'"),
              "What is the smallest number of round brackets you must insert to make the text balanced?"),
        Level(brackets_5, ("'(()'", "')()())'", "''", "'()(()'", "'(()())'", "'()(())))('"),
              "Find the length of the longest piece of the text that is a balanced sequence of round brackets."),
    ],
    "grid": [
        Level(grid_1, ("['#..', '.#.', '..#']", "['....']", "['##', '##']", "['#.#.#', '.....']", "['.']", "['.#', '#.', '##']"),
              "Count the wall cells, drawn as '#', in the grid."),
        Level(grid_2, ("1, 1", "2, 2", "3, 2", "0, 5", "4, 4", "2, 5"),
              "Count the shortest paths along grid lines between opposite corners of an r by c block."),
        Level(grid_3, ("['...', '...', '...']", "['.#.', '...', '...']", "['..', '#.']", "['.#', '#.']", "['....', '.#..', '...#', '....']", "['.']"),
              "Count the ways to walk from the top-left to the bottom-right cell moving only right or down and never stepping on '#'."),
        Level(grid_4, ("[[1, 3, 1], [1, 5, 1], [4, 2, 1]]", "[[1, 2], [3, 4]]", "[[5]]", "[[1, 2, 3]]", "[[1], [9], [1]]", "[[9, 1, 1], [1, 1, 9], [1, 9, 1]]"),
              "Walking from the top-left to the bottom-right cell, moving only right or down, what is the smallest possible sum of the cells you visit?"),
        Level(grid_5, ("['11000', '11000', '00100', '00011']", "['111', '010', '111']", "['000']", "['101', '010', '101']", "['1']", "['1100', '0110', '0011', '1001']"),
              "Count the separate groups of '1' cells, where cells belong together if they touch on a side."),
    ],
    "spans": [
        Level(spans_1, ("[[1, 3], [2, 5]]", "[[0, 10]]", "[]", "[[4, 4], [1, 2]]", "[[-3, 3], [0, 1], [5, 9]]", "[[2, 7], [7, 8]]"),
              "Add up the lengths (end minus start) of all the intervals."),
        Level(spans_2, ("[[1, 3], [2, 6], [8, 10]]", "[[1, 4], [4, 5]]", "[]", "[[5, 6], [1, 2]]", "[[1, 10], [2, 3], [4, 8]]", "[[3, 5], [1, 2], [2, 3]]"),
              "Join the intervals that overlap or touch, and list the joined intervals from left to right."),
        Level(spans_3, ("[[1, 3], [2, 5]]", "[[0, 10]]", "[]", "[[4, 4], [1, 2]]", "[[1, 4], [6, 8], [2, 7]]", "[[2, 7], [7, 8]]"),
              "How much of the number line is covered by at least one of the intervals?"),
        Level(spans_4, ("[[1, 3], [2, 5], [4, 6]]", "[[0, 10]]", "[[1, 2], [2, 3]]", "[[1, 5], [2, 6], [3, 7], [8, 9]]", "[]", "[[1, 10], [2, 3], [2, 4], [2, 5]]"),
              "Treating each interval as including its start but not its end, what is the largest number of intervals that cover one point?"),
        Level(spans_5, ("[[1, 2], [2, 3], [3, 4], [1, 3]]", "[[1, 2], [1, 2], [1, 2]]", "[[1, 2], [2, 3]]", "[[0, 10], [1, 2], [3, 4], [5, 6]]", "[]", "[[1, 5], [2, 3], [4, 6], [7, 8]]"),
              "What is the smallest number of intervals to delete so that no two of the rest overlap (touching ends are fine)?"),
    ],
}
