"""Problem families of the scripted brain's bank on whole numbers: digits, primes, coins.

Each family is five levels (synthgen.demo.scripted.bank_level.Level), from easy to hard. Each function is
a real, self-contained Python function: the brain sends its source (renamed to `f`) as the
teacher's code and calls it in-process to know gold values. Rules for adding one: imports inside
the body, no recursion through its own name, no mutation of arguments, deterministic, and fast
on every listed input.
"""

from __future__ import annotations

from synthgen.demo.scripted.bank_level import Level


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


def primes_1(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def primes_2(n):
    if n < 2:
        return 0
    sieve = [True] * (n + 1)
    sieve[0] = sieve[1] = False
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            for j in range(i * i, n + 1, i):
                sieve[j] = False
    return sum(sieve)


def primes_3(n):
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


def primes_4(n):
    count = 0
    d = 1
    while d * d <= n:
        if n % d == 0:
            count += 1 if d * d == n else 2
        d += 1
    return count


def primes_5(n):
    found = 0
    candidate = 1
    while found < n:
        candidate += 1
        if all(candidate % d for d in range(2, int(candidate**0.5) + 1)):
            found += 1
    return candidate


def coins_1(n):
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def coins_2(n, steps):
    ways = [1] + [0] * n
    for i in range(1, n + 1):
        ways[i] = sum(ways[i - s] for s in steps if s <= i)
    return ways[n]


def coins_3(amount, coins):
    best = [0] + [None] * amount
    for a in range(1, amount + 1):
        options = [best[a - c] for c in coins if c <= a and best[a - c] is not None]
        best[a] = min(options) + 1 if options else None
    return -1 if best[amount] is None else best[amount]


def coins_4(amount, coins):
    ways = [1] + [0] * amount
    for c in coins:
        for a in range(c, amount + 1):
            ways[a] += ways[a - c]
    return ways[amount]


def coins_5(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


FAMILIES = {
    "digits": [
        Level(
            digits_1,
            ("123", "4071", "99", "5", "1000", "86"),
            "Add up the decimal digits of the number.",
        ),
        Level(
            digits_2,
            ("12", "305", "7", "99", "1111", "240"),
            "Square every decimal digit of the number and add the squares up.",
        ),
        Level(
            digits_3,
            ("121", "918", "5", "1000", "4736", "90"),
            "Walk over the digits from the last one to the first, adding and subtracting them in turn (the last digit "
            "is added).",
        ),
        Level(
            digits_4,
            ("39", "999", "7", "25", "77", "10"),
            "Count how many times you must replace the number by the product of its digits before it has a single "
            "digit.",
        ),
        Level(
            digits_5,
            ("7", "19", "4", "1", "23", "20"),
            "Repeatedly replace the number by the sum of the squares of its digits. Count the steps until it becomes "
            "1, or give -1 if it starts repeating first.",
        ),
    ],
    "primes": [
        Level(
            primes_1,
            ("2", "15", "17", "1", "91", "97"),
            "Is the number prime?",
        ),
        Level(
            primes_2,
            ("10", "2", "1", "30", "100", "13"),
            "How many primes are there that are not larger than the number?",
        ),
        Level(
            primes_3,
            ("12", "7", "1", "360", "97", "1001"),
            "List the prime factors of the number from smallest to largest, repeating a factor as often as it divides.",
        ),
        Level(
            primes_4,
            ("12", "7", "1", "36", "100", "97"),
            "How many positive divisors does the number have?",
        ),
        Level(
            primes_5,
            ("1", "2", "5", "10", "25", "50"),
            "Give the n-th prime number, counting 2 as the first.",
        ),
    ],
    "coins": [
        Level(
            coins_1,
            ("1", "2", "3", "5", "10", "0"),
            "In how many ways can you climb n stairs taking one or two stairs at a time?",
        ),
        Level(
            coins_2,
            ("4, [1, 2]", "4, [1, 3]", "5, [2]", "6, [2]", "7, [1, 2, 3]", "3, [5]"),
            "In how many ordered ways can you climb n stairs when each move covers one of the allowed step sizes?",
        ),
        Level(
            coins_3,
            ("11, [1, 2, 5]", "3, [2]", "0, [1]", "7, [2, 3]", "12, [1, 6, 9]", "10, [10]"),
            "What is the smallest number of coins (any number of each kind) that add up to the amount? Give -1 if "
            "none do.",
        ),
        Level(
            coins_4,
            ("5, [1, 2, 5]", "3, [2]", "0, [7]", "10, [10]", "8, [2, 3, 5]", "12, [1, 6, 9]"),
            "In how many ways can the amount be paid with the coin kinds, where the order of coins does not matter?",
        ),
        Level(
            coins_5,
            (
                "'abcde', 'ace'",
                "'abc', 'abc'",
                "'abc', 'def'",
                "'', 'abc'",
                "'stone', 'longest'",
                "'aggtab', 'gxtxayb'",
            ),
            "How long is the longest sequence of characters that appears, in order but not necessarily side by side, "
            "in both texts?",
        ),
    ],
}
