#!/usr/bin/env python3
"""Generate the puzzle library in puzzles/ (JSON version 1 and polycube twins).

Usage: python3 puzzles/tools/make_puzzles.py     (rewrites the generated files)

Piece shapes come from:
  * pentominoes, tetrominoes: drawn below as art, then checked against an
    enumeration of all free polyominoes (12 pentominoes, 5 tetrominoes);
  * hexominoes: enumerated here (the 35 free hexominoes), named after the
    letters of the box-in-a-diamond definition in polycube/box-in-a-diamond.txt
    (copied verbatim from the polycube article), which must list the same 35;
  * Soma, Tetris Cube, Bedlam Cube: the xyz digit triples of the physical
    puzzles as puzzles/README.md ("Piece shapes") writes them, copied below;
    Tetris Cube pieces take the names A..L of polycube/tetris-cube.txt
    (matched up to rotation).
The published counts and their sources are puzzles/README.md's table
"Published counts"; each file's description names its source too.
polycube/tetris-cube.txt and polycube/box-in-a-diamond.txt are NOT generated:
they are verbatim copies from the article.  Run check_puzzles.py afterwards.
"""

import json
import os
import sys

sys.dont_write_bytecode = True   # keep puzzles/tools free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from polyforms import (PLANE8, ROT24, ROTZ4, canon, cells_to_rows, digits_to_cells,  # noqa: E402
                       free_polyominoes, mirror_x, normalize, read_polycube, rows_to_cells)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)   # puzzles/

# ---- piece sets --------------------------------------------------------------

# The 12 pentominoes (Golomb's letters).  First string is y = 0.
PENTOMINOES = [
    ("F", [".##", "##.", ".#."]),
    ("I", ["#####"]),
    ("L", ["####", "#..."]),
    ("N", ["##..", ".###"]),
    ("P", ["##", "##", "#."]),
    ("T", ["###", ".#.", ".#."]),
    ("U", ["#.#", "###"]),
    ("V", ["#..", "#..", "###"]),
    ("W", ["#..", "##.", ".##"]),
    ("X", [".#.", "###", ".#."]),
    ("Y", ["####", ".#.."]),
    ("Z", ["##.", ".#.", ".##"]),
]
# Mirror images added for the one-sided set, named by the lowercase letter.
CHIRAL = ["F", "L", "N", "P", "Y", "Z"]

# The 5 tetrominoes (suffix 4 keeps the names apart from the pentominoes).
TETROMINOES = [
    ("I4", ["####"]),
    ("L4", ["###", "#.."]),
    ("O4", ["##", "##"]),
    ("S4", [".##", "##."]),
    ("T4", ["###", ".#."]),
]

SOMA = [  # puzzles/README.md, "Piece shapes"
    ("V", "000 010 100"),
    ("L", "000 010 100 200"),
    ("T", "000 010 020 110"),
    ("Z", "010 020 100 110"),
    ("A", "000 010 100 101"),
    ("B", "001 011 100 101"),
    ("P", "000 010 100 001"),
]

TETRIS_CUBE = [  # puzzles/README.md, in its order
    "000 100 110 200 300", "000 010 020 100 200", "000 100 200 201 301",
    "000 100 110 111 211", "000 100 110 111 200", "000 010 011 100 200",
    "010 100 110 111 121 210", "000 001 100 110 210", "000 001 010 100 110",
    "000 010 020 021 100 200", "000 001 010 110 120 210", "000 010 011 020 100 200",
]

BEDLAM_CUBE = [  # puzzles/README.md, in its order; named A..M here
    "010 100 110 120 210", "000 100 110 111 200", "000 001 100 110",
    "000 100 101 110 200", "000 100 110 200 201", "010 020 100 110 200",
    "000 010 100 200 201", "010 011 100 110 200", "000 100 200 210 211",
    "010 100 101 110 200", "010 100 101 110 201", "000 010 110 120 210",
    "000 001 002 010 100",
]


def art_piece(name, rows, **extra):
    d = {"name": name, "rows": rows}
    d.update(extra)
    return d


def cells_piece(name, cells, **extra):
    d = {"name": name, "cells": [list(c) for c in sorted(cells, key=lambda c: (c[2], c[1], c[0]))]}
    d.update(extra)
    return d


def pentominoes():
    return [art_piece(n, r) for n, r in PENTOMINOES]


def onesided_pentominoes():
    out = pentominoes()
    shapes = dict(PENTOMINOES)
    for n in CHIRAL:
        out.append(art_piece(n.lower(), cells_to_rows(mirror_x(rows_to_cells(shapes[n], "#")))))
    return out


def tetrominoes():
    return [art_piece(n, r) for n, r in TETROMINOES]


def hexominoes():
    """The 35 free hexominoes, named and ordered as in box-in-a-diamond.txt."""
    enumerated = set(free_polyominoes(6))
    assert len(enumerated) == 35
    _, pcs = read_polycube(os.path.join(ROOT, "polycube", "box-in-a-diamond.txt"))
    out, seen = [], set()
    for name, typ, cells in pcs:
        if typ != "M":
            continue
        key = canon(cells, PLANE8)
        assert key in enumerated and key not in seen, name
        seen.add(key)
        out.append(art_piece(name, cells_to_rows(cells)))
    assert seen == enumerated
    return out


def soma():
    return [cells_piece(n, digits_to_cells(d)) for n, d in SOMA]


def tetris_cube():
    # README.md's set (the physical puzzle's) is the mirror image of the article's: its 6 chiral pieces
    # (A, B, C, E, I, J) are the reflections of the article's, the 6 others are
    # achiral.  A reflected set has exactly the same number of solutions.
    _, pcs = read_polycube(os.path.join(ROOT, "polycube", "tetris-cube.txt"))
    named = {canon(mirror_x(c), ROT24): n for n, _, c in pcs}
    assert len(named) == 12
    out = []
    for d in TETRIS_CUBE:
        cells = digits_to_cells(d)
        out.append(cells_piece(named.pop(canon(cells, ROT24)), cells))
    assert not named
    return sorted(out, key=lambda p: p["name"])


def bedlam_cube():
    return [cells_piece(chr(ord("A") + i), digits_to_cells(d)) for i, d in enumerate(BEDLAM_CUBE)]


# ---- boards ------------------------------------------------------------------

def rect(w, h):
    return {"size": [w, h]}


def rows_board(rows):
    return {"rows": rows}


def center_hole_8x8():
    return ["........"] * 3 + ["...##..."] * 2 + ["........"] * 3


def corners_8x8():
    return ["#......#"] + ["........"] * 6 + ["#......#"]


def parallelogram(w, h):
    """h rows of w cells, each row shifted one cell right of the one below."""
    return [" " * y + "." * w for y in range(h)]


def diamond_board():
    _, pcs = read_polycube(os.path.join(ROOT, "polycube", "box-in-a-diamond.txt"))
    open_cells = set(next(c for n, t, c in pcs if t == "open"))
    return [''.join('.' if (x, y, 0) in open_cells else '#' for x in range(23)) for y in range(23)]


def soma_bathtub():
    # floor: a 5x3 slab; second layer: the 12 rim cells of that slab.
    floor = ["....."] * 3
    rim = [".....", ".###.", "....."]
    return {"layers": [floor, rim]}


def soma_steps():
    # a 3x3 footprint; the three rows (along y) are 2, 3 and 4 cubes tall.
    heights = [2, 3, 4]
    layers = []
    for z in range(4):
        layers.append([("..." if z < heights[y] else "###") for y in range(3)])
    return {"layers": layers}


# ---- puzzles -----------------------------------------------------------------

PENTO_SRC = "the 12 free pentominoes (may be turned over)"


def puzzles():
    P = []

    def add(fname, name, desc, board, pieces, rotations="all", expected=None):
        d = {"version": 1, "name": name, "description": desc, "board": board, "pieces": pieces,
             "rotations": rotations, "mirror": False}
        if expected:
            d["expected"] = expected
        P.append((fname, d))

    # 1. the puzzles with published counts (puzzles/README.md, "Published counts")
    for w, h, raw, rot in ((10, 6, 9356, 2339), (12, 5, 4040, 1010), (15, 4, 1472, 368), (20, 3, 8, 2)):
        add(f"pentominoes-{h}x{w}.json", f"Pentominoes {h}x{w}",
            f"The 12 free pentominoes in a {h}x{w} rectangle (X is the long side). {rot:,} "
            f"solutions up to symmetry: C. B. and J. Haselgrove, Eureka 23 (1960).",
            rect(w, h), pentominoes(), expected={"raw": raw, "rotations": rot})
    add("pentominoes-8x8-center-hole.json", "Pentominoes 8x8 minus the centre",
        "The 12 free pentominoes in an 8x8 square without its central 2x2: 65 solutions up to "
        "symmetry (Dana Scott, Princeton technical report, 1958).",
        rows_board(center_hole_8x8()), pentominoes(), expected={"raw": 520, "rotations": 65})
    for w, h in ((15, 14), (21, 10)):
        add(f"hexominoes-{h}x{w}.json", f"Hexominoes {h}x{w}",
            f"The 35 free hexominoes in a {h}x{w} rectangle: impossible by parity (24 pieces "
            "balanced, 11 of imbalance 2 cannot sum to 0; Golomb, Polyominoes). Piece names follow the "
            "box-in-a-diamond definition of the polycube article.",
            rect(w, h), hexominoes(), expected={"raw": 0, "rotations": 0})
    onesided_desc = ("The 18 one-sided pentominoes (turned in the plane only): the 12 free ones "
                     "plus the mirror images of F, L, N, P, Y, Z, named by the lowercase letters "
                     "f, l, n, p, y, z.")
    add("onesided-pentominoes-3x30.json", "One-sided pentominoes 3x30",
        onesided_desc + " Board 3x30: 46 solutions up to rotation (Matt Busche's polycube "
        "article, 2011).", rect(30, 3), onesided_pentominoes(), "one-sided",
        expected={"raw": 184, "rotations": 46})
    add("onesided-pentominoes-5x18.json", "One-sided pentominoes 5x18",
        onesided_desc + " Board 5x18: 686,628 solutions up to rotation (Matt Busche's FILA "
        "article, 2018, test case OP); a minutes-long benchmark.",
        rect(18, 5), onesided_pentominoes(), "one-sided", expected={"rotations": 686628})
    add("soma-cube.json", "Soma cube",
        "Piet Hein's Soma cube: the 7 pieces (V, L, T, Z, A, B, P; A and B are mirror images) "
        "in a 3x3x3 cube: 240 solutions up to rotation and reflection (Conway and Guy, 1961; "
        "Winning Ways, 1982).", {"size": [3, 3, 3]}, soma(),
        expected={"raw": 11520, "rotations": 480, "mirror": 240})
    add("tetris-cube.json", "Tetris Cube",
        "The Tetris Cube: 12 pieces in a 4x4x4 box, 9,839 solutions up to rotation (Matt "
        "Busche's polycube article, 2011). Shapes as puzzles/README.md writes them. Piece names "
        "A..L follow polycube/tetris-cube.txt (the polycube article), whose piece set is the "
        "mirror image of this one: its chiral pieces A, B, C, E, I, J are reflected there. "
        "Mirror-image sets have the same solution counts.",
        {"size": [4, 4, 4]}, tetris_cube(), expected={"raw": 236136, "rotations": 9839})
    add("bedlam-cube.json", "Bedlam Cube",
        "The Bedlam Cube: 12 pentacubes and 1 tetracube in a 4x4x4 box, 19,186 solutions up "
        "to rotation (Matt Busche's polycube article, 2011). Pieces named A..M in the order "
        "of puzzles/README.md.", {"size": [4, 4, 4]}, bedlam_cube(),
        expected={"raw": 460464, "rotations": 19186})

    # 2. other puzzles (no published count here, so no "expected")
    add("pentominoes-8x8-corners.json", "Pentominoes 8x8 minus the corners",
        "The 12 free pentominoes in an 8x8 square without its four corner cells.",
        rows_board(corners_8x8()), pentominoes())
    add("pentominoes-scott-8x8.json", "Scott's 8x8 with a square tetromino",
        "The 12 free pentominoes and the 2x2 square tetromino O in an 8x8 square, the square "
        "free to go anywhere (Dana Scott's 1958 problem without the centre restriction).",
        rect(8, 8), pentominoes() + [art_piece("O", ["##", "##"])])
    add("pentominoes-8x8-fixed-center.json", "Pentominoes 8x8, fixed centre square",
        "Fixed-piece example: a 2x2 square O is fixed at the centre of an 8x8 board and the 12 "
        "free pentominoes fill the rest. Same tilings as pentominoes-8x8-center-hole.json "
        "(published: 520 raw, 65 up to rotation), each with O added.",
        rect(8, 8), pentominoes() + [cells_piece("O", [(3, 3, 0), (4, 3, 0), (3, 4, 0), (4, 4, 0)],
                                                 fixed=True)],
        expected={"raw": 520, "rotations": 65})
    add("tetrominoes-pentominoes-8x10.json", "Tetrominoes and pentominoes 8x10",
        "The 5 free tetrominoes (I4, L4, O4, S4, T4) and the 12 free pentominoes, 80 cells, in "
        "an 8x10 rectangle.", rect(10, 8), tetrominoes() + pentominoes())
    add("hexominoes-parallelogram-15x14.json", "Hexominoes 15x14 parallelogram",
        "The 35 free hexominoes in a parallelogram of 14 rows of 15 cells, each row shifted one "
        "cell from the one below (polycube article, 2011, test case HP; figure 6 shows a "
        "solution). Piece names follow the box-in-a-diamond definition.",
        rows_board(parallelogram(15, 14)), hexominoes())
    add("hexominoes-box-in-a-diamond.json", "Hexominoes box-in-a-diamond",
        "The 35 free hexominoes in a 23x23 diamond around an 11x5 box (polycube article, 2011, "
        "test case HBD; figure 12 shows a solution). Twin of polycube/box-in-a-diamond.txt, "
        "whose stationary '*' piece becomes '#' off-board cells here.",
        rows_board(diamond_board()), hexominoes())
    add("soma-bathtub.json", "Soma bathtub",
        "The 7 Soma pieces as a bathtub: a 5x3 floor (z = 0) with the 12-cell rim of that floor "
        "on top (z = 1).", soma_bathtub(), soma())
    add("soma-steps.json", "Soma steps",
        "The 7 Soma pieces as three steps on a 3x3 footprint: the rows y = 0, 1, 2 are 2, 3 and "
        "4 cubes tall.", soma_steps(), soma())
    add("l-trominoes-4x3.json", "Four L-trominoes in a 4x3 box",
        "A tiny test: 4 copies of the L-tromino fill a 3x4 rectangle.",
        rect(4, 3), [art_piece("L", ["##", "#."], count=4)])
    add("l-trominoes-fixed-4x3.json", "L-trominoes, one fixed",
        "A tiny fixed-piece test: one L-tromino is fixed in the corner of a 3x4 rectangle and "
        "3 copies fill the rest.",
        rect(4, 3), [cells_piece("corner", [(0, 0, 0), (1, 0, 0), (0, 1, 0)], fixed=True),
                     art_piece("L", ["##", "#."], count=3)])
    return P


# ---- writing -----------------------------------------------------------------

def dumps(d):
    """2-space indented JSON, one piece per line, board art one row per line."""
    j = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
    out = ["{"]
    items = list(d.items())
    for i, (k, v) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if k == "board":
            (bk, bv), = v.items()
            if bk in ("rows",):
                body = ",\n".join(f"    {j(r)}" for r in bv)
                out.append(f'  "board": {{"{bk}": [\n{body}\n  ]}}{comma}')
            elif bk == "layers":
                body = ",\n".join("    [" + ", ".join(j(r) for r in layer) + "]" for layer in bv)
                out.append(f'  "board": {{"{bk}": [\n{body}\n  ]}}{comma}')
            else:
                out.append(f'  "board": {{{j(bk)}: {j(bv)}}}{comma}')
        elif k == "pieces":
            body = ",\n".join("    " + j(p) for p in v)
            out.append(f'  "pieces": [\n{body}\n  ]{comma}')
        else:
            out.append(f"  {j(k)}: {j(v)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def polycube_text(title, dims, pieces, comments=None):
    lines = [f"# {title}", f"D:xDim={dims[0]}:yDim={dims[1]}:zDim={dims[2]}"]
    for p in pieces:
        cells = sorted(p["cells"], key=lambda c: (c[2], c[1], c[0])) if "cells" in p else \
            sorted(rows_to_cells(p["rows"], "#"), key=lambda c: (c[1], c[0]))
        layout = ",  ".join(f"{c[0]} {c[1]} {c[2] if len(c) > 2 else 0}" for c in cells)
        note = f"  # {comments[p['name']]}" if comments else ""
        lines.append(f"C:name={p['name']}:type=M:layout={layout}{note}")
    lines.append("~D")
    return "\n".join(lines) + "\n"


def main():
    written = []
    for fname, d in puzzles():
        path = os.path.join(ROOT, fname)
        with open(path, "w") as f:
            f.write(dumps(d))
        written.append(fname)
    soma_notes = {"V": "3 cubes, bent", "L": "4, L", "T": "4, T", "Z": "4, skew",
                  "A": "4, screw", "B": "4, screw (mirror image of A)", "P": "4, branch"}
    with open(os.path.join(ROOT, "polycube", "soma-cube.txt"), "w") as f:
        f.write(polycube_text("Soma Cube Puzzle Definition (twin of soma-cube.json)", (3, 3, 3),
                              soma(), soma_notes))
    with open(os.path.join(ROOT, "polycube", "pentominoes-6x10.txt"), "w") as f:
        f.write(polycube_text("Pentominoes 10x6 Puzzle Definition (twin of pentominoes-6x10.json)",
                              (10, 6, 1), pentominoes()))
    written += ["polycube/soma-cube.txt", "polycube/pentominoes-6x10.txt"]
    print("\n".join(written))


if __name__ == "__main__":
    main()
