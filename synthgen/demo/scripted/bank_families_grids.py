"""Problem families of the scripted brain's bank on two-dimensional data: grid, matrix.

Each family is five levels (synthgen.demo.scripted.bank_level.Level), from easy to hard. Each function is
a real, self-contained Python function: the brain sends its source (renamed to `f`) as the
teacher's code and calls it in-process to know gold values. Rules for adding one: imports inside
the body, no recursion through its own name, no mutation of arguments, deterministic, and fast
on every listed input.
"""

from __future__ import annotations

from synthgen.demo.scripted.bank_level import Level


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


FAMILIES = {
    "grid": [
        Level(
            grid_1,
            ("['#..', '.#.', '..#']", "['....']", "['##', '##']", "['#.#.#', '.....']", "['.']", "['.#', '#.', '##']"),
            "Count the wall cells, drawn as '#', in the grid.",
        ),
        Level(
            grid_2,
            ("1, 1", "2, 2", "3, 2", "0, 5", "4, 4", "2, 5"),
            "Count the shortest paths along grid lines between opposite corners of an r by c block.",
        ),
        Level(
            grid_3,
            (
                "['...', '...', '...']",
                "['.#.', '...', '...']",
                "['..', '#.']",
                "['.#', '#.']",
                "['....', '.#..', '...#', '....']",
                "['.']",
            ),
            "Count the ways to walk from the top-left to the bottom-right cell moving only right or down and never "
            "stepping on '#'.",
        ),
        Level(
            grid_4,
            (
                "[[1, 3, 1], [1, 5, 1], [4, 2, 1]]",
                "[[1, 2], [3, 4]]",
                "[[5]]",
                "[[1, 2, 3]]",
                "[[1], [9], [1]]",
                "[[9, 1, 1], [1, 1, 9], [1, 9, 1]]",
            ),
            "Walking from the top-left to the bottom-right cell, moving only right or down, what is the smallest "
            "possible sum of the cells you visit?",
        ),
        Level(
            grid_5,
            (
                "['11000', '11000', '00100', '00011']",
                "['111', '010', '111']",
                "['000']",
                "['101', '010', '101']",
                "['1']",
                "['1100', '0110', '0011', '1001']",
            ),
            "Count the separate groups of '1' cells, where cells belong together if they touch on a side.",
        ),
    ],
    "matrix": [
        Level(
            matrix_1,
            (
                "[[1, 2], [3, 4]]",
                "[[5]]",
                "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]",
                "[]",
                "[[2, 9, 9], [9, -3, 9], [9, 9, 7]]",
                "[[0, 1], [1, 0]]",
            ),
            "Add up the numbers on the main diagonal of the square table.",
        ),
        Level(
            matrix_2,
            (
                "[[1, 2], [3, 4]]",
                "[[5]]",
                "[[1, 2, 3]]",
                "[[1], [2], [3]]",
                "[[1, 2, 3], [4, 5, 6]]",
                "[[0, 0], [1, 1]]",
            ),
            "Turn the rows of the table into its columns.",
        ),
        Level(
            matrix_3,
            (
                "[[1, 2], [3, 4]]",
                "[[5]]",
                "[[1, 2, 3]]",
                "[[1], [2], [3]]",
                "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]",
                "[[0, 1], [2, 3], [4, 5]]",
            ),
            "Rotate the table a quarter turn clockwise.",
        ),
        Level(
            matrix_4,
            (
                "[[1, 2], [3, 4]]",
                "[[5]]",
                "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]",
                "[[1, 2, 3, 4]]",
                "[[1], [2], [3]]",
                "[[1, 2, 3], [4, 5, 6]]",
            ),
            "Read the table in a clockwise spiral starting at the top-left corner.",
        ),
        Level(
            matrix_5,
            (
                "[[1, 1], [1, 1]]",
                "[[0]]",
                "[[1, 0, 1], [1, 1, 1], [1, 1, 1]]",
                "[[1, 1, 1], [1, 1, 1], [1, 1, 0]]",
                "[[0, 1], [1, 0]]",
                "[[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]",
            ),
            "How long is the side of the largest square block made only of ones?",
        ),
    ],
}
