#!/usr/bin/env python3
"""palette_search.py — the five colours after Okabe and Ito's seven (issue 52 item 3).

Up to 12 configurations should each have a colour of their own, kept apart for colour-blind
readers. The first seven stay Okabe and Ito's (2008), so that a session of up to seven keeps its
colours. The five more are chosen from published palettes (Tol's bright, vibrant, muted, dark and
discrete-rainbow colours; Krzywinski's 12-colour palette for colour blindness; a few tab10 ones):
greedily, with random restarts, to maximise the smallest distance of any pair of the twelve under
simulated deuteranopia and protanopia (Machado et al. 2009, the matrices tests/ui uses) and 0.8 of
it in normal vision, in 8-bit sRGB units. On white, candidates darker than a luminance of 0.55; on a
dark background, lighter than 0.10. Writes the choice and its distances to OUT (default
docs/data/issue52/palette.txt); ui/figures/ChartTheme.cpp holds the result.

    python3 bench/palette_search.py [OUT]
"""
import itertools
import math
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEUTERANOPIA = [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                [-0.011820, 0.042940, 0.968881]]
PROTANOPIA = [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
              [-0.003882, -0.048116, 1.051998]]
TRITANOPIA = [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
              [0.004733, 0.691367, 0.303900]]
NORMAL = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
CANDIDATES = """4477AA 66CCEE 228833 CCBB44 EE6677 AA3377 BBBBBB 0077BB 33BBEE 009988 EE7733 CC3311
EE3377 332288 88CCEE 44AA99 117733 999933 DDCC77 CC6677 882255 AA4499 222255 225555 225522 666633
663333 555555 9F0162 009F81 FF5AAF 00FCCF 8400CD 008DF9 00C2F9 FFB2FD A40122 E20134 FF6E3A
FFC33B 004488 DDAA33 BB5566 997700 994455 6699CC EE99AA EECC66 666666 1965B0 882E72 4EB265
DC050C F1932D 7BAFDE AE76A3 90C987 F7F056 E8601C 72190E 42150A 8C564B 7F7F7F BCBD22
17BECF""".split()
OKABE_ITO = {"light": "0072B2 E69F00 009E73 CC79A7 56B4E9 D55E00 F0E442".split(),
             "dark": "56B4E9 E69F00 009E73 CC79A7 F0E442 D55E00 788CFF".split()}


def linear(c):
    c /= 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def encoded(c):
    c = min(max(c, 0.0), 1.0)
    return 255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)


def rgb(text):
    return tuple(int(text[i:i + 2], 16) for i in (0, 2, 4))


def simulate(colour, m):
    r, g, b = (linear(x) for x in colour)
    return [encoded(m[i][0] * r + m[i][1] * g + m[i][2] * b) for i in range(3)]


def distance(a, b, m):
    return math.dist(simulate(a, m), simulate(b, m))


def luminance(colour):
    r, g, b = (linear(x) for x in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def apart(a, b):
    return min(distance(a, b, DEUTERANOPIA), distance(a, b, PROTANOPIA),
               0.8 * distance(a, b, NORMAL))


def smallest(palette, m=None):
    pairs = itertools.combinations(palette, 2)
    return min((distance(a, b, m) if m else apart(a, b)) for a, b in pairs)


def search(theme, rng):
    fixed = [rgb(x) for x in OKABE_ITO[theme]]
    ok = (lambda c: 0.01 < luminance(c) < 0.55) if theme == "light" else (lambda c: luminance(c) > 0.10)
    pool = [rgb(x) for x in CANDIDATES if rgb(x) not in fixed and ok(rgb(x))]
    best = None
    for _ in range(400):
        palette, left = list(fixed), list(pool)
        rng.shuffle(left)
        while len(palette) < 12:
            pick = max(left, key=lambda c: min(apart(c, p) for p in palette) + rng.random() * 3)
            palette.append(pick)
            left.remove(pick)
        score = smallest(palette)
        if best is None or score > best[0]:
            best = (score, palette)
    return fixed, best[1]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "data", "issue52",
                                                              "palette.txt")
    rng = random.Random(52)
    lines = ["# bench/palette_search.py: the 12-colour series palette (ui/figures/ChartTheme.cpp)",
             "# theme  colours  smallest pair distance (8-bit sRGB): deuteranopia, protanopia, "
             "tritanopia, normal; the first seven alone"]
    for theme in ("light", "dark"):
        fixed, palette = search(theme, rng)
        hexes = " ".join("#%02X%02X%02X" % c for c in palette)
        lines.append(f"{theme}  {hexes}")
        lines.append(
            f"{theme}  twelve: {smallest(palette, DEUTERANOPIA):.1f} {smallest(palette, PROTANOPIA):.1f} "
            f"{smallest(palette, TRITANOPIA):.1f} {smallest(palette, NORMAL):.1f}; seven: "
            f"{smallest(fixed, DEUTERANOPIA):.1f} {smallest(fixed, PROTANOPIA):.1f} "
            f"{smallest(fixed, TRITANOPIA):.1f} {smallest(fixed, NORMAL):.1f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
