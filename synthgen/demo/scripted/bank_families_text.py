"""Problem families of the scripted brain's bank on strings: text, brackets, words, cipher.

Each family is five levels (synthgen.demo.scripted.bank_level.Level), from easy to hard. Each function is
a real, self-contained Python function: the brain sends its source (renamed to `f`) as the
teacher's code and calls it in-process to know gold values. Rules for adding one: imports inside
the body, no recursion through its own name, no mutation of arguments, deterministic, and fast
on every listed input.
"""

from __future__ import annotations

from synthgen.demo.scripted.bank_level import Level


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
        elif c in pairs and (not stack or stack.pop() != pairs[c]):
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


FAMILIES = {
    "text": [
        Level(
            text_1,
            ("'banana'", "'sky'", "'Education'", "'aeiou'", "'rhythm and blues'", "'Queue'"),
            "Count the vowels in the text, upper or lower case.",
        ),
        Level(
            text_2,
            ("'banana'", "'sky'", "'Education'", "'Hello, World'", "'queue it up'", "'AEIOUxyz'"),
            "Drop every vowel from the text and keep everything else as it is.",
        ),
        Level(
            text_3,
            ("'hello'", "'sky'", "'Education'", "'leetcode'", "'a man a plan'", "'Ui'"),
            "Keep every consonant and symbol in place but put the vowels back in reverse order.",
        ),
        Level(
            text_4,
            ("'abcabcbb'", "'bbbb'", "''", "'pwwkew'", "'dvdf'", "'abcdefg'"),
            "Find the length of the longest piece of the text in which no character appears twice.",
        ),
        Level(
            text_5,
            ("'aabcbcdbca'", "'aaaa'", "'abbbc'", "'abcabcbb'", "'aaabbbccca'", "'q'"),
            "Find the length of the shortest piece of the text that still contains every distinct character of the "
            "whole text.",
        ),
    ],
    "brackets": [
        Level(
            brackets_1,
            ("'(()'", "'()()'", "'))('", "'((('", "'(a)(b))'", "''"),
            "How many more opening round brackets than closing ones are there?",
        ),
        Level(
            brackets_2,
            ("'(())'", "'()()()'", "'((()))(()'", "''", "'(a(b(c)d)e)'", "'()((()))'"),
            "How deeply are the round brackets nested at their deepest point?",
        ),
        Level(
            brackets_3,
            ("'([]{})'", "'(]'", "''", "'{[()()]}'", "'(('", "'a(b)c]'"),
            "Decide whether all three kinds of brackets in the text open and close in a properly nested way.",
        ),
        Level(
            brackets_4,
            ("'())'", "'((('", "'()'", "')('", "'()))(('", "'(()())'"),
            "What is the smallest number of round brackets you must insert to make the text balanced?",
        ),
        Level(
            brackets_5,
            ("'(()'", "')()())'", "''", "'()(()'", "'(()())'", "'()(())))('"),
            "Find the length of the longest piece of the text that is a balanced sequence of round brackets.",
        ),
    ],
    "words": [
        Level(
            words_1,
            ("'the quick brown fox'", "'hello'", "''", "'  spaced   out  words '", "'a b c d e f'", "'one two'"),
            "Count the words in the text, where words are separated by any amount of white space.",
        ),
        Level(
            words_2,
            ("'the quick brown fox'", "'hello'", "''", "'to be or not'", "'a bb ccc dd'", "'equal sized words'"),
            "Return the longest word of the text; when several are equally long, the first of them.",
        ),
        Level(
            words_3,
            ("'the quick brown fox'", "'hello'", "''", "'python IS fun'", "'a b c'", "'  two   words '"),
            "Put the words in reverse order and start each with a capital letter (the rest lower case), separated by "
            "single spaces.",
        ),
        Level(
            words_4,
            (
                "'the cat and the hat'",
                "'b a b a'",
                "'Hello hello HELLO world'",
                "'one'",
                "'x y z y z'",
                "'dog cat Dog CAT cat'",
            ),
            "Which word occurs most often, ignoring case? On a tie take the alphabetically first; answer in lower "
            "case.",
        ),
        Level(
            words_5,
            (
                "'listen silent enlist google'",
                "'a b c'",
                "''",
                "'tea eat ate tan nat bat'",
                "'Dusty study night thing'",
                "'abc cab bca abc'",
            ),
            "Group the words that are anagrams of each other (ignoring case) and list the group sizes from largest to "
            "smallest.",
        ),
    ],
    "cipher": [
        Level(
            cipher_1,
            ("'abc', 1", "'xyz', 3", "'hello world', 13", "'Mixed Case', 2", "'zzz', 26", "'a-b-c', 25"),
            "Shift every lower-case letter forward in the alphabet by k places, wrapping from z to a; leave "
            "everything else alone.",
        ),
        Level(
            cipher_2,
            ("'abc', 1", "'XYZ', 3", "'Hello, World!', 13", "'Mixed Case', 2", "'zzz', 27", "'No Change', 0"),
            "Shift every letter forward in the alphabet by k places, wrapping around and keeping upper and lower case.",
        ),
        Level(
            cipher_3,
            ("'attack', 'lemon'", "'hello', 'a'", "'abc def', 'bc'", "'zzz', 'b'", "'x', 'key'", "'keep it up', 'ab'"),
            "Shift each lower-case letter by the alphabet position (a=0) of the next key letter, cycling through the "
            "key and using key letters only for text letters.",
        ),
        Level(
            cipher_4,
            ("'aaab'", "'abc'", "''", "'zzzzzzzzzzzz'", "'aabbaa'", "'x'"),
            "Replace every run of equal characters by the character followed by the length of the run.",
        ),
        Level(
            cipher_5,
            ("'aaab'", "'abc'", "''", "'zzzzzzzzzzzz'", "'aabbaa'", "'aabcccccaaa'"),
            "Compress runs of a repeated character into the character and the run length (single characters stay "
            "bare), but keep the original text unless the result is strictly shorter.",
        ),
    ],
}
