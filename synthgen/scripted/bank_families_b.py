"""Problem families 7-12 of the scripted brain's bank (see synthgen.scripted.bank_problems).

Same rules as bank_families_a: self-contained, deterministic functions that never call
themselves by name and never change their arguments.
"""

from __future__ import annotations

from synthgen.scripted.bank_problems import Level


def words_1(text):
    return len(text.split())


def words_2(text):
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


def words_3(text):
    return " ".join(w.capitalize() for w in reversed(text.split()))


def words_4(text):
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return min(counts, key=lambda w: (-counts[w], w)) if counts else ""


def words_5(text):
    groups = {}
    for word in text.lower().split():
        key = "".join(sorted(word))
        groups[key] = groups.get(key, 0) + 1
    return sorted(groups.values(), reverse=True)


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
    for i in range(2, int(n ** 0.5) + 1):
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
        if all(candidate % d for d in range(2, int(candidate ** 0.5) + 1)):
            found += 1
    return candidate


def cipher_1(text, k):
    return "".join(chr((ord(c) - 97 + k) % 26 + 97) if "a" <= c <= "z" else c for c in text)


def cipher_2(text, k):
    out = []
    for c in text:
        if c.isascii() and c.isalpha():
            base = 65 if c.isupper() else 97
            out.append(chr((ord(c) - base + k) % 26 + base))
        else:
            out.append(c)
    return "".join(out)


def cipher_3(text, key):
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


def cipher_4(text):
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{text[i]}{j - i}")
        i = j
    return "".join(out)


def cipher_5(text):
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
    tokens = expr.replace("(", " ( ").replace(")", " ) ").replace("+", " + ").replace("-", " - ").replace("*", " * ").split()
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


def matrix_1(m):
    return sum(m[i][i] for i in range(len(m)))


def matrix_2(m):
    return [list(col) for col in zip(*m)]


def matrix_3(m):
    return [list(row) for row in zip(*m[::-1])]


def matrix_4(m):
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


def matrix_5(m):
    best = 0
    width = len(m[0]) if m else 0
    size = [[0] * (width + 1) for _ in range(len(m) + 1)]
    for i, row in enumerate(m, 1):
        for j, cell in enumerate(row, 1):
            if cell == 1:
                size[i][j] = 1 + min(size[i - 1][j], size[i][j - 1], size[i - 1][j - 1])
                best = max(best, size[i][j])
    return best


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
    "words": [
        Level(words_1, ("'the quick brown fox'", "'hello'", "''", "'  spaced   out  words '", "'a b c d e f'", "'one two'"),
              "Count the words in the text, where words are separated by any amount of white space."),
        Level(words_2, ("'the quick brown fox'", "'hello'", "''", "'to be or not'", "'a bb ccc dd'", "'equal sized words'"),
              "Return the longest word of the text; when several are equally long, the first of them."),
        Level(words_3, ("'the quick brown fox'", "'hello'", "''", "'python IS fun'", "'a b c'", "'  two   words '"),
              "Put the words in reverse order and start each with a capital letter (the rest lower case), separated by single spaces."),
        Level(words_4, ("'the cat and the hat'", "'b a b a'", "'Hello hello HELLO world'", "'one'", "'x y z y z'", "'dog cat Dog CAT cat'"),
              "Which word occurs most often, ignoring case? On a tie take the alphabetically first; answer in lower case."),
        Level(words_5, ("'listen silent enlist google'", "'a b c'", "''", "'tea eat ate tan nat bat'", "'Dusty study night thing'", "'abc cab bca abc'"),
              "Group the words that are anagrams of each other (ignoring case) and list the group sizes from largest to smallest."),
    ],
    "primes": [
        Level(primes_1, ("2", "15", "17", "1", "91", "97"), "Is the number prime?"),
        Level(primes_2, ("10", "2", "1", "30", "100", "13"), "How many primes are there that are not larger than the number?"),
        Level(primes_3, ("12", "7", "1", "360", "97", "1001"), "List the prime factors of the number from smallest to largest, repeating a factor as often as it divides."),
        Level(primes_4, ("12", "7", "1", "36", "100", "97"), "How many positive divisors does the number have?"),
        Level(primes_5, ("1", "2", "5", "10", "25", "50"), "Give the n-th prime number, counting 2 as the first."),
    ],
    "cipher": [
        Level(cipher_1, ("'abc', 1", "'xyz', 3", "'hello world', 13", "'Mixed Case', 2", "'zzz', 26", "'a-b-c', 25"),
              "Shift every lower-case letter forward in the alphabet by k places, wrapping from z to a; leave everything else alone."),
        Level(cipher_2, ("'abc', 1", "'XYZ', 3", "'Hello, World!', 13", "'Mixed Case', 2", "'zzz', 27", "'No Change', 0"),
              "Shift every letter forward in the alphabet by k places, wrapping around and keeping upper and lower case."),
        Level(cipher_3, ("'attack', 'lemon'", "'hello', 'a'", "'abc def', 'bc'", "'zzz', 'b'", "'x', 'key'", "'keep it up', 'ab'"),
              "Shift each lower-case letter by the alphabet position (a=0) of the next key letter, cycling through the key and using key letters only for text letters."),
        Level(cipher_4, ("'aaab'", "'abc'", "''", "'zzzzzzzzzzzz'", "'aabbaa'", "'x'"),
              "Replace every run of equal characters by the character followed by the length of the run."),
        Level(cipher_5, ("'aaab'", "'abc'", "''", "'zzzzzzzzzzzz'", "'aabbaa'", "'aabcccccaaa'"),
              "Compress runs of a repeated character into the character and the run length (single characters stay bare), but keep the original text unless the result is strictly shorter."),
    ],
    "ops": [
        Level(ops_1, ("['+3', '-2', '+10']", "[]", "['-5']", "['+1', '+1', '+1', '+1']", "['+100', '-99']", "['-7', '+2', '-1']"),
              "Start from zero and apply each signed change in turn; report the final value."),
        Level(ops_2, ("['push 3', 'push 4', 'pop']", "['pop']", "['push 1', 'push 2', 'push 3']", "[]", "['push 5', 'pop', 'push 6', 'push 7']", "['push 9', 'pop', 'pop']"),
              "Run the push and pop commands on an empty stack (a pop on an empty stack does nothing) and return the stack from bottom to top."),
        Level(ops_3, ("['2', '3', '+']", "['4', '2', '-', '5', '*']", "['7']", "['1', '2', '3', '*', '+']", "['5', '1', '2', '+', '4', '*', '+', '3', '-']", "['3', '4', '-']"),
              "Evaluate the expression written in postfix order (numbers first, then the operator), using +, - and *."),
        Level(ops_4, ("['add 5', 'add 3', 'undo']", "['undo']", "['add 2', 'add 2', 'undo', 'undo', 'add 7']", "[]", "['add 10', 'add -4', 'undo', 'add 1']", "['add 1', 'add 2', 'add 3']"),
              "Start at zero; each 'add N' adds N and 'undo' cancels the most recent add that has not been cancelled yet. Report the final value."),
        Level(ops_5, ("'1 + 2 * 3'", "'(1 + 2) * 3'", "'7'", "'10 - 2 - 3'", "'2 * (3 + 4) * 5'", "'((8)) - 3 * (2 - 5)'"),
              "Evaluate the arithmetic expression with +, - and * on whole numbers, respecting brackets and the usual precedence."),
    ],
    "matrix": [
        Level(matrix_1, ("[[1, 2], [3, 4]]", "[[5]]", "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]", "[]", "[[2, 9, 9], [9, -3, 9], [9, 9, 7]]", "[[0, 1], [1, 0]]"),
              "Add up the numbers on the main diagonal of the square table."),
        Level(matrix_2, ("[[1, 2], [3, 4]]", "[[5]]", "[[1, 2, 3]]", "[[1], [2], [3]]", "[[1, 2, 3], [4, 5, 6]]", "[[0, 0], [1, 1]]"),
              "Turn the rows of the table into its columns."),
        Level(matrix_3, ("[[1, 2], [3, 4]]", "[[5]]", "[[1, 2, 3]]", "[[1], [2], [3]]", "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]", "[[0, 1], [2, 3], [4, 5]]"),
              "Rotate the table a quarter turn clockwise."),
        Level(matrix_4, ("[[1, 2], [3, 4]]", "[[5]]", "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]", "[[1, 2, 3, 4]]", "[[1], [2], [3]]", "[[1, 2, 3], [4, 5, 6]]"),
              "Read the table in a clockwise spiral starting at the top-left corner."),
        Level(matrix_5, ("[[1, 1], [1, 1]]", "[[0]]", "[[1, 0, 1], [1, 1, 1], [1, 1, 1]]", "[[1, 1, 1], [1, 1, 1], [1, 1, 0]]", "[[0, 1], [1, 0]]", "[[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]"),
              "How long is the side of the largest square block made only of ones?"),
    ],
    "coins": [
        Level(coins_1, ("1", "2", "3", "5", "10", "0"), "In how many ways can you climb n stairs taking one or two stairs at a time?"),
        Level(coins_2, ("4, [1, 2]", "4, [1, 3]", "5, [2]", "6, [2]", "7, [1, 2, 3]", "3, [5]"),
              "In how many ordered ways can you climb n stairs when each move covers one of the allowed step sizes?"),
        Level(coins_3, ("11, [1, 2, 5]", "3, [2]", "0, [1]", "7, [2, 3]", "12, [1, 6, 9]", "10, [10]"),
              "What is the smallest number of coins (any number of each kind) that add up to the amount? Give -1 if none do."),
        Level(coins_4, ("5, [1, 2, 5]", "3, [2]", "0, [7]", "10, [10]", "8, [2, 3, 5]", "12, [1, 6, 9]"),
              "In how many ways can the amount be paid with the coin kinds, where the order of coins does not matter?"),
        Level(coins_5, ("'abcde', 'ace'", "'abc', 'abc'", "'abc', 'def'", "'', 'abc'", "'stone', 'longest'", "'aggtab', 'gxtxayb'"),
              "How long is the longest sequence of characters that appears, in order but not necessarily side by side, in both texts?"),
    ],
}
