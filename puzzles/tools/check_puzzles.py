#!/usr/bin/env python3
"""Check every puzzle file under puzzles/ (independently of the C reader).

Usage: python3 puzzles/tools/check_puzzles.py

For each *.json: strict parse (version 1, only the allowed keys, no duplicate
keys), unique piece names, connected pieces, fixed pieces on the board and
not overlapping, free board volume == mobile piece volume (counts included),
and the piece sets: pentominoes are exactly the 12 free pentominoes with the
right letters, one-sided sets exactly the 18 one-sided pentominoes (lowercase
= mirror image), tetrominoes the 5 free ones, hexominoes the 35 free ones,
Soma / Tetris Cube / Bedlam Cube exactly the shapes written in puzzles/README.md
("Piece shapes"). "expected" counts are compared with its table "Published
counts", which names the source of each.
The polycube/*.txt twins are compared with their JSON twins.
Exits non-zero on the first failure of any file (all files are reported).
"""

import glob
import os
import re
import sys

sys.dont_write_bytecode = True   # keep puzzles/tools free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from polyforms import (ISO48, PLANE8, ROT24, ROTZ4, FormatError, canon, connected,  # noqa: E402
                       digits_to_cells, free_plane, free_polycubes, free_polyominoes, mirror_x,
                       normalize, plane_canon, read_polycube, read_puzzle)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FREE4 = set(free_polyominoes(4))
FREE5 = set(free_polyominoes(5))
FREE6 = set(free_polyominoes(6))
ONESIDED5 = set(free_polyominoes(5, ROTZ4))
assert (len(FREE4), len(FREE5), len(FREE6), len(ONESIDED5)) == (5, 12, 35, 18)


def pentomino_letter(cells):
    """Name a pentomino from its geometry alone (no table shared with the
    generator).  Works on any orientation."""
    s = normalize(cells)
    assert len(s) == 5 and all(z == 0 for *_, z in s)
    w = max(x for x, *_ in s) + 1
    h = max(y for _, y, _ in s) + 1
    w, h = max(w, h), min(w, h)
    pts = {(x, y) for x, y, _ in s}
    deg = {p: sum((p[0] + dx, p[1] + dy) in pts for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)))
           for p in pts}
    has_square = any({(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)} <= pts for x, y in pts)
    longest = 0
    for x, y in pts:
        for dx, dy in ((1, 0), (0, 1)):
            n = 0
            while (x + n * dx, y + n * dy) in pts:
                n += 1
            longest = max(longest, n)
    if w == 5:
        return "I"
    if w == 4:
        if longest == 4:
            # the odd cell touches an end of the bar (L) or an inner cell (Y)
            return "Y" if max(deg.values()) == 3 else "L"
        return "N"
    if w == 3 and h == 2:
        return "P" if has_square else "U"
    # 3x3 boxes: F T V W X Z, told apart by the maximal straight runs of 3
    # cells (bars) and the largest number of neighbours of one cell
    bars = sum(1 for x, y in pts for dx, dy in ((1, 0), (0, 1))
               if (x - dx, y - dy) not in pts and (x + dx, y + dy) in pts and (x + 2 * dx, y + 2 * dy) in pts)
    top = max(deg.values())
    if top == 4:
        return "X"
    if bars == 0:
        return "W"
    if bars == 2:
        return "V" if top == 2 else "T"
    return "Z" if top == 2 else "F"


# ---- the published counts and shapes of puzzles/README.md ------------------------

def load_oracle(path):
    text = open(path).read()
    flat = " ".join(text.split())

    def shapes(label):
        m = re.search(r"\*\*" + label + r"\*\*:(.*?)(\*\*|##|$)", flat)
        return m.group(1)

    soma = {}
    for name, digits in re.findall(r"([A-Z]) ((?:\d{3} ?)+)", shapes("Soma")):
        soma[name] = digits_to_cells(digits)
    tetris = [digits_to_cells(t.strip(" .")) for t in shapes("Tetris Cube").split("·")]
    bedlam = [digits_to_cells(t.strip(" .")) for t in shapes("Bedlam Cube").split("·")]
    assert len(soma) == 7 and len(tetris) == 12 and len(bedlam) == 13, "README.md shapes not parsed"
    rows = {}
    for line in text.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) >= 3 and line.startswith("|") and not cols[0].startswith(("Puzzle", "---")):
            rows[cols[0]] = [int(c.replace(",", "")) if re.fullmatch(r"[\d,]+", c) else
                             (int(re.match(r"[\d,]+", c).group(0).replace(",", "")) if re.match(r"[\d,]+ ", c) else None)
                             for c in cols[1:]]
    return {"soma": soma, "tetris": tetris, "bedlam": bedlam, "rows": rows}


# file -> (published table row label, keys of the row's numbers)
ORACLE_ROWS = {
    "pentominoes-6x10.json": ("12 pentominoes, 6×10", ["raw", "rotations"]),
    "pentominoes-5x12.json": ("12 pentominoes, 5×12", ["raw", "rotations"]),
    "pentominoes-4x15.json": ("12 pentominoes, 4×15", ["raw", "rotations"]),
    "pentominoes-3x20.json": ("12 pentominoes, 3×20", ["raw", "rotations"]),
    "pentominoes-8x8-center-hole.json": ("12 pentominoes, 8×8 minus the central 2×2", ["raw", "rotations"]),
    "pentominoes-8x8-fixed-center.json": ("12 pentominoes, 8×8 minus the central 2×2", ["raw", "rotations"]),
    "hexominoes-14x15.json": ("35 hexominoes, any rectangle (e.g. 14×15, 10×21)", ["raw", "rotations"]),
    "hexominoes-10x21.json": ("35 hexominoes, any rectangle (e.g. 14×15, 10×21)", ["raw", "rotations"]),
    "onesided-pentominoes-3x30.json": ("18 one-sided pentominoes, 3×30", ["raw", "rotations"]),
    "onesided-pentominoes-5x18.json": ("18 one-sided pentominoes, 5×18", ["raw", "rotations"]),
    "soma-cube.json": ("Soma cube, 3×3×3 (7 pieces)", ["raw", "rotations", "mirror"]),
    "tetris-cube.json": ("Tetris Cube, 4×4×4 (12 pieces)", ["raw", "rotations", "mirror"]),
    "bedlam-cube.json": ("Bedlam Cube, 4×4×4 (13 pieces)", ["raw", "rotations", "mirror"]),
    "dominoes-6x6.json": ("18 dominoes, 6×6", ["raw", "rotations", "mirror"]),
    "dominoes-8x8.json": ("32 dominoes, 8×8", ["raw", "rotations", "mirror"]),
    "pentominoes-any5-5x5.json": ("any 5 distinct pentominoes, 5×5", ["raw", "rotations", "mirror"]),
    "pentominoes-any4-4x5.json": ("any 4 distinct pentominoes, 4×5", ["raw", "rotations", "mirror"]),
    "hexiamonds-6x6.json": ("12 hexiamonds, 6×6 rhombus", ["raw", "rotations", "mirror"]),
    "hexiamonds-9x4.json": ("12 hexiamonds, 9×4 parallelogram", ["raw", "rotations", "mirror"]),
    "hexiamonds-12x3.json": ("12 hexiamonds, 12×3 parallelogram", ["raw", "rotations", "mirror"]),
    "hexiamonds-ring-offset.json": ("12 hexiamonds, hexagon of side 4 less a hexagon of side 2 one unit off centre",
                                    ["raw", "rotations", "mirror"]),
    "polyhexes-34-hexagon.json": ("3 trihexes and 7 tetrahexes, hexagon of side 4", ["raw", "rotations", "mirror"]),
}


# ---- checks --------------------------------------------------------------------

class CheckError(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise CheckError(msg)


def check_json(path, oracle):
    fname = os.path.basename(path)
    pz = read_puzzle(path)
    notes = []
    board = set(pz["board"])
    exp = pz["expected"]
    mobile = [p for p in pz["pieces"] if not p["fixed"]]
    fixed = [p for p in pz["pieces"] if p["fixed"]]
    taken = set()
    for p in fixed:
        cs = set(p["cells"])
        need(cs <= board, f"fixed piece {p['name']} off the board")
        need(not (cs & taken), f"fixed piece {p['name']} overlaps another")
        taken |= cs
    free = len(board) - len(taken)
    optional = pz["optional"] - taken
    need(not (pz["optional"] & taken), "a fixed piece covers an optional cell")
    if optional or any(p["count_min"] != p["count"] for p in mobile):
        # some choice of counts covers every required cell and fits the board
        reach = {0}
        for p in mobile:
            reach = {v + k * len(p["cells"]) for v in reach for k in range(p["count_min"], p["count"] + 1)}
        fits = sorted(v for v in reach if free - len(optional) <= v <= free)
        need(fits, f"no choice of counts covers {free - len(optional)} to {free} cells")
        notes.append(f"{len(board)} cells, {len(optional)} optional; piece volumes {fits[0]}..{fits[-1]} fit")
    else:
        vol = sum(len(p["cells"]) * p["count"] for p in mobile)
        need(free == vol, f"free board volume {free} != piece volume {vol}")
        notes.append(f"{len(board)} cells, {free} free = {vol} piece cells, "
                     f"{sum(p['count'] for p in pz['pieces'])} pieces")
    for p in pz["pieces"]:
        need(connected(p["cells"], pz["lattice"]), f"piece {p['name']} not connected")
    if pz["lattice"] != "cubic":
        notes += check_plane(pz)
        return notes + check_expected(fname, pz, oracle)
    flat = all(c[2] == 0 for c in board)
    if flat:
        need(all(c[2] == 0 for p in pz["pieces"] for c in p["cells"]), "3D piece on a flat board")

    by_size = {}
    for p in mobile:
        by_size.setdefault(len(p["cells"]), []).append(p)
    rot = pz["rotations"]
    if flat and 5 in by_size and rot == "all":
        pents = by_size[5]
        keys = [canon(p["cells"], PLANE8) for p in pents]
        need(len(set(keys)) == len(keys) == 12 and set(keys) == FREE5, "not exactly the 12 free pentominoes")
        for p in pents:
            need(pentomino_letter(p["cells"]) == p["name"],
                 f"piece named {p['name']} is the {pentomino_letter(p['cells'])} pentomino")
        notes.append("12 free pentominoes, letters match shapes")
    if flat and 5 in by_size and rot == "one-sided":
        pents = by_size[5]
        keys = [canon(p["cells"], ROTZ4) for p in pents]
        need(len(set(keys)) == len(keys) == 18 and set(keys) == ONESIDED5, "not exactly the 18 one-sided pentominoes")
        named = {p["name"]: p["cells"] for p in pents}
        for p in pents:
            n = p["name"]
            if n.isupper():
                need(pentomino_letter(p["cells"]) == n, f"{n} is the {pentomino_letter(p['cells'])} pentomino")
            else:
                need(n.upper() in named and pentomino_letter(p["cells"]) == n.upper() and
                     canon(p["cells"], ROTZ4) == canon(mirror_x(named[n.upper()]), ROTZ4) and
                     canon(p["cells"], ROTZ4) != canon(named[n.upper()], ROTZ4),
                     f"{n} is not the mirror image of {n.upper()}")
        need(sorted(n for n in named if n.islower()) == list("flnpyz"), "mirrored names")
        notes.append("18 one-sided pentominoes, lowercase = mirror images")
    if flat and 4 in by_size and rot == "all" and len(by_size[4]) >= 5:
        keys = [canon(p["cells"], PLANE8) for p in by_size[4]]
        need(len(set(keys)) == len(keys) == 5 and set(keys) == FREE4, "not exactly the 5 free tetrominoes")
        notes.append("5 free tetrominoes")
    if flat and 6 in by_size:
        keys = [canon(p["cells"], PLANE8) for p in by_size[6]]
        need(len(set(keys)) == len(keys) == 35 and set(keys) == FREE6, "not exactly the 35 free hexominoes")
        notes.append("35 free hexominoes")
        # 24 hexominoes cover 3 + 3 cells of a checkerboard, 11 cover 4 + 2: the
        # board's imbalance must be |4k - 22| for some k in 0..11.
        imb = abs(sum(1 if (x + y) % 2 == 0 else -1 for x, y, _ in board))
        reachable = imb % 4 == 2 and imb <= 22
        if exp and not any(exp.values()):
            need(not reachable, f"expected no solution but colour imbalance {imb} is reachable")
            notes.append(f"colour imbalance {imb}: no tiling by parity, as expected")
        else:
            need(reachable, f"board colour imbalance {imb} unreachable")
            notes.append(f"colour imbalance {imb} (reachable: 2, 6, ..., 22)")

    if not flat:
        need(rot == "all", "3D puzzle without full rotations")
        pieces3 = {p["name"]: p["cells"] for p in mobile}
        if oracle and fname.startswith("soma-"):
            need(len(pieces3) == 7 and all(normalize(pieces3[n]) == normalize(c) for n, c in oracle["soma"].items()),
                 "Soma pieces differ from README.md")
            tetracubes = set(free_polycubes(4))
            other = {canon(c, ROT24) for c in pieces3.values() if len(c) == 4}
            need(len(other) == 6 and other == tetracubes - {canon([(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)], ROT24),
                                                           canon([(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)], ROT24)},
                 "Soma tetracubes are not the 6 non-convex tetracubes")
            notes.append("Soma pieces = README.md, = V + the 6 tetracubes other than I and O")
        if oracle and fname == "tetris-cube.json":
            need(sorted(tuple(sorted(normalize(c))) for c in pieces3.values()) ==
                 sorted(tuple(sorted(normalize(c))) for c in oracle["tetris"]), "Tetris Cube pieces differ from README.md")
            notes.append("pieces = README.md")
        if oracle and fname == "bedlam-cube.json":
            need([tuple(sorted(normalize(pieces3[chr(65 + i)]))) for i in range(13)] ==
                 [tuple(sorted(normalize(c))) for c in oracle["bedlam"]], "Bedlam Cube pieces differ from README.md")
            notes.append("pieces = README.md")
        keys = [canon(c, ROT24) for c in pieces3.values()]
        need(len(set(keys)) == len(keys), "two pieces with the same shape (use count)")

    return notes + check_expected(fname, pz, oracle)


# the plane sets: (lattice, order) -> (how many free shapes, what they are called)
PLANE_SETS = {("triangular", 6): (12, "hexiamonds"), ("hexagonal", 3): (3, "trihexes"),
              ("hexagonal", 4): (7, "tetrahexes"), ("hexagonal", 5): (22, "pentahexes")}


def check_plane(pz):
    """Puzzles on the triangular and hexagonal lattices: pieces distinct
    under the lattice's 12 motions, each order a complete set of the free
    polyiamonds or polyhexes (an enumeration of its own)."""
    lat = pz["lattice"]
    notes = [f"{lat} lattice"]
    need(pz["rotations"] == "all", "plane puzzle with restricted rotations (no such library file yet)")
    mobile = [p for p in pz["pieces"] if not p["fixed"]]
    keys = [plane_canon(lat, p["cells"]) for p in mobile]
    need(len(set(keys)) == len(keys), "two pieces with the same shape (use count)")
    by_size = {}
    for p, k in zip(mobile, keys):
        by_size.setdefault(len(p["cells"]), set()).add(k)
    for n, have in sorted(by_size.items()):
        want = set(free_plane(lat, n))
        need(have == want, f"the pieces of {n} cells are not all the {len(want)} free ones")
        count, what = PLANE_SETS.get((lat, n), (len(want), f"{n}-cell shapes"))
        need(len(want) == count, f"enumeration: {len(want)} free {what}, not {count}")
        notes.append(f"the {len(want)} free {what}")
    return notes


def check_expected(fname, pz, oracle):
    notes = []
    exp = pz["expected"]
    if fname in ORACLE_ROWS:
        label, keys = ORACLE_ROWS[fname]
        need(oracle is None or label in oracle["rows"], f"published row {label!r} not found in README.md")
        if oracle:
            want = {k: v for k, v in zip(keys, oracle["rows"][label]) if v is not None}
            need(exp == want, f"expected {exp} != README.md {want}")
            notes.append(f"expected = published {want}")
    else:
        need(not exp, "expected counts on a puzzle with no published count in README.md")
    return notes


def check_polycube_twins():
    out = []
    P = lambda f: os.path.join(ROOT, f)  # noqa: E731

    def pieces_of(json_file):
        return {p["name"]: p["cells"] for p in read_puzzle(P(json_file))["pieces"]}

    # soma and pentominoes: same names, same shapes (exactly, up to translation)
    for txt, js, dims in (("polycube/soma-cube.txt", "soma-cube.json", (3, 3, 3)),
                          ("polycube/pentominoes-6x10.txt", "pentominoes-6x10.json", (10, 6, 1))):
        d, pcs = read_polycube(P(txt))
        need(d == dims, f"{txt}: dims {d}")
        jp = pieces_of(js)
        need({n: normalize(c) for n, _, c in pcs} == {n: normalize(c) for n, c in jp.items()},
             f"{txt} differs from {js}")
        out.append(f"{txt}: same pieces as {js}, dims {d}")
    # tetris cube: the article's set is the mirror image of README.md's
    d, pcs = read_polycube(P("polycube/tetris-cube.txt"))
    need(d == (4, 4, 4), "tetris-cube.txt dims")
    jp = pieces_of("tetris-cube.json")
    need(sorted(n for n, _, _ in pcs) == sorted(jp), "tetris-cube.txt names")
    for n, _, c in pcs:
        need(canon(mirror_x(c), ROT24) == canon(jp[n], ROT24), f"tetris-cube.txt piece {n}")
    chiral = sorted(n for n, _, c in pcs if canon(c, ROT24) != canon(mirror_x(c), ROT24))
    out.append("polycube/tetris-cube.txt: names as tetris-cube.json; each piece is the mirror image "
               f"of the JSON one (chiral: {', '.join(chiral)}; the rest are achiral)")
    # box in a diamond
    d, pcs = read_polycube(P("polycube/box-in-a-diamond.txt"))
    pz = read_puzzle(P("hexominoes-box-in-a-diamond.json"))
    openc = next(c for n, t, c in pcs if t == "open")
    star = next(c for n, t, c in pcs if t == "S")
    need(d == (23, 23, 1) and len(openc) + len(star) == 23 * 23, "box-in-a-diamond.txt dims")
    need(set(openc) == set(pz["board"]), "box-in-a-diamond board differs")
    jp = {p["name"]: p["cells"] for p in pz["pieces"]}
    need({n: canon(c, ROT24) for n, t, c in pcs if t == "M"} == {n: canon(c, ROT24) for n, c in jp.items()},
         "box-in-a-diamond pieces differ")
    out.append(f"polycube/box-in-a-diamond.txt: board ({len(openc)} open cells) and 35 pieces as the JSON twin")
    return out


def main():
    oracle = load_oracle(os.path.join(ROOT, "README.md"))
    failed = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "*.json"))):
        try:
            notes = check_json(path, oracle)
            print(f"ok   {os.path.basename(path)}: " + "; ".join(notes))
        except (CheckError, FormatError, ValueError) as e:
            failed += 1
            print(f"FAIL {os.path.basename(path)}: {e}")
    try:
        for line in check_polycube_twins():
            print(f"ok   {line}")
    except (CheckError, FormatError, StopIteration) as e:
        failed += 1
        print(f"FAIL polycube twins: {e}")
    print(f"{failed} failure(s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
