// The designer's generated sets on the triangular and hexagonal lattices
// (www/js/shapes.js, lattice.js, planenames.js), in Node without the
// browser: the enumeration counts the published numbers of free, one-sided
// and fixed polyiamonds and polyhexes, the 12 motions are 12 distinct
// motions, and every shape of every set carries Polyform Puzzler's name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enumeratePlane, PLANE_SETS, planeSetPieces } from '../../www/js/shapes.js';
import { planeMotions, normalizePlane, geometry } from '../../www/js/lattice.js';

const fixedCount = (lattice, n) => enumeratePlane(lattice, n).reduce((a, s) => a
  + new Set(planeMotions(lattice).map((f) => JSON.stringify(normalizePlane(lattice, s.map(f))))).size, 0);

test('polyiamonds of orders 1 to 7: free, one-sided and fixed counts', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => enumeratePlane('triangular', n).length), [1, 1, 1, 3, 4, 12, 24]);
  assert.deepEqual([4, 5, 6, 7].map((n) => enumeratePlane('triangular', n, true).length), [4, 6, 19, 43]);
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => fixedCount('triangular', n)), [2, 3, 6, 14, 36, 94, 250]);
});

test('polyhexes of orders 1 to 5: free, one-sided and fixed counts', () => {
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => enumeratePlane('hexagonal', n).length), [1, 1, 3, 7, 22]);
  assert.deepEqual([4, 5].map((n) => enumeratePlane('hexagonal', n, true).length), [10, 33]);
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => fixedCount('hexagonal', n)), [1, 3, 11, 44, 186]);
});

test('every generated set is named as Polyform Puzzler names it, and as long as its label says', () => {
  const want = {
    iam6: 'C6 E6 F6 G6 H6 I6 J6 O6 P6 S6 V6 X6',
    iam6o: 'C6 E6 f6 F6 g6 G6 h6 H6 i6 I6 j6 J6 O6 p6 P6 s6 S6 V6 X6',
    hex3: 'A3 I3 V3',
    hex4: 'I4 J4 O4 P4 S4 U4 Y4',
    hex5: 'A5 B5 C5 D5 E5 F5 G5 H5 I5 J5 L5 N5 P5 Q5 R5 S5 T5 U5 V5 W5 X5 Y5',
  };
  for (const [lattice, sets] of Object.entries(PLANE_SETS)) {
    for (const set of sets) {
      const names = planeSetPieces(lattice, set).map((p) => p.name);
      assert.equal(names.length, Number(/\((\d+)\)/.exec(set.label)[1]), set.label);
      assert.ok(names.every((n) => /^[A-Za-z]\d$/.test(n)), `${set.label}: every shape named (${names})`);
      assert.equal(new Set(names).size, names.length);
      if (want[set.id]) assert.equal(names.join(' '), want[set.id]);
    }
  }
});

test('the lattice geometry: a cell found under its own centre, neighbours across its sides', () => {
  for (const lattice of ['triangular', 'hexagonal']) {
    const g = geometry(lattice);
    for (const c of [[0, 0, 0], [3, -2, 1], [-4, 5, 0]]) {
      const cell = lattice === 'hexagonal' ? [c[0], c[1], 0] : c;
      assert.deepEqual(g.cellAt(...g.centre(cell)), cell, `${lattice} ${cell}`);
      for (const side of g.sides(cell)) {
        const back = g.sides(side.n).find((s) => g.key(s.n) === g.key(cell));
        assert.ok(back, `${lattice}: ${side.n} is across a side of ${cell} and ${cell} across one of its`);
      }
    }
  }
});
