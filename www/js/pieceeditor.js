// pieceeditor.js — the designer's piece editor: a piece drawn in layers
// (up to 8 x 8 x 8 cells), or on triangles or hexagons in a parallelogram
// of up to 8 x 8 (setLattice; lattice.js draws it, y up), or an existing
// one opened for editing; turned (a quarter turn, or a sixth on the plane
// lattices), tipped over, mirrored, shifted; every change undoable; saved
// as a new piece or over the one opened.  And a small isometric drawing
// of a piece, so that a 3D piece in a list reads as one piece rather than
// as loose slices.  A piece's cells may carry colours (Puzzle JSON
// "colors"): the colour brush paints them, and they turn with the piece.

import { h, s, clear } from './dom.js';
import { normalize } from './shapes.js';
import { geometry, isPlane, screenBounds, turnCell, mirrorCell, normalizePlane } from './lattice.js';

export const EDIT_MAX = 8; // cells per side of the editor's box

const key = (x, y, z) => `${x},${y},${z}`;
const parse = (k) => k.split(',').map(Number);

/**
 * A piece's cells in normal form (normalize, or normalizePlane on the plane
 * lattices) with their colours kept beside them: {cells, colors}, colors
 * null when every cell is neutral.
 */
export function normalizeColoured(lattice, cells, colors) {
  const plane = isPlane(lattice);
  const n = plane ? normalizePlane(lattice, cells) : normalize(cells);
  if (!colors || !colors.some(Boolean)) return { cells: n, colors: null };
  const mx = Math.min(...cells.map((c) => c[0])), my = Math.min(...cells.map((c) => c[1]));
  const mz = plane ? 0 : Math.min(...cells.map((c) => c[2] || 0));
  const zOf = (c) => (plane ? (lattice === 'triangular' && c[2] ? 1 : 0) : (c[2] || 0) - mz);
  const at = new Map(cells.map((c, i) => [key(c[0] - mx, c[1] - my, zOf(c)), colors[i] || 0]));
  return { cells: n, colors: n.map((c) => at.get(key(...c)) || 0) };
}

/**
 * The editor.  onSave(piece, replacing) gets {name, cells, colors}
 * (normalised; colors null when no cell is coloured) and the name of the
 * piece it replaces (null for a new one); onNote(text) reports what
 * happened.  colours (optional): {el, current(), color(n)}: a row of colour
 * swatches to show, the colour chosen in it (0 neutral) and how colour n
 * is drawn.  Returns {el, edit(piece), setLattice(l), useColour(), redraw()}.
 */
export function pieceEditor({ onSave, onNote, colours = null }) {
  let box = { w: 5, h: 5, l: 1 };
  let lattice = 'cubic';
  let cells = new Set();
  let colors = new Map(); // key -> colour 1..63 of a cell (neutral cells absent)
  let brush = 'cells';    // 'cells' (a click turns a cell on or off) or 'colour' (paints it)
  let replacing = null; // the name of the piece opened for editing
  const undo = [], redo = [];

  const name = h('input', { type: 'text', 'data-testid': 'custom-name', value: 'A', class: 'num-small', 'aria-label': 'Piece name' });
  const dim = (testid, label, v) => h('input', { type: 'number', min: '1', max: String(EDIT_MAX), step: '1', value: String(v), class: 'num-tiny', 'data-testid': testid, 'aria-label': label });
  const wIn = dim('edit-w', 'Editor width', box.w), hIn = dim('edit-h', 'Editor depth', box.h), lIn = dim('edit-l', 'Editor layers', box.l);
  const grids = h('div', { class: 'edit-layers', 'data-testid': 'custom-grid' });
  const view = h('div', { class: 'edit-view', 'aria-hidden': 'true' });
  const saveBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'custom-add', text: 'Add this piece' });
  const undoBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'edit-undo', text: 'Undo' });
  const redoBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'edit-redo', text: 'Redo' });

  const snapshot = () => ({ box: { ...box }, cells: new Set(cells), colors: new Map(colors) });
  function restore(sn) { box = { ...sn.box }; cells = new Set(sn.cells); colors = new Map(sn.colors); sync(); }
  /* A click on cell k: the cell brush turns it on or off; the colour brush
   * paints it the chosen colour (a cell off is turned on), or back to
   * neutral when it already has that colour. */
  function click(k) {
    change(() => {
      if (brush === 'colour' && colours) {
        const n = colours.current();
        const was = cells.has(k) ? colors.get(k) || 0 : -1;
        cells.add(k);
        if (n && was !== n) colors.set(k, n); else colors.delete(k);
        return;
      }
      if (cells.has(k)) { cells.delete(k); colors.delete(k); } else cells.add(k);
    });
  }
  const colourTitle = (k) => (colors.get(k) ? `, colour ${colors.get(k)}` : '');
  /* Every change goes through here: undoable, and redo forgets the future. */
  function change(fn) {
    const before = snapshot();
    fn();
    undo.push(before);
    redo.length = 0;
    sync();
  }

  /* The editor's grid on the triangular or hexagonal lattice: one drawing
   * of the w x h parallelogram, a click turns a cell on or off. */
  function planeGrid() {
    const geom = geometry(lattice);
    const all = [];
    for (let z = 0; z < (lattice === 'triangular' ? 2 : 1); z++) for (let y = 0; y < box.h; y++) for (let x = 0; x < box.w; x++) all.push([x, y, z]);
    const b = screenBounds(geom, [all]);
    const u = 22;
    const W = Math.ceil((b.maxX - b.minX) * u + 2), H = Math.ceil((b.maxY - b.minY) * u + 2);
    const svg = s('svg', { class: 'custom-plane', width: W, height: H, viewBox: `-1 -1 ${W} ${H}`, 'data-lattice': lattice });
    for (const c of all) {
      const k = key(...c);
      const on = cells.has(k), n = on ? colors.get(k) || 0 : 0;
      const pts = geom.polygon(c).map(([X, Y]) => `${((X - b.minX) * u).toFixed(1)},${((Y - b.minY) * u).toFixed(1)}`).join(' ');
      svg.append(s('polygon', {
        points: pts, class: `plane-cell${on ? ' on' : ''}`, 'data-x': c[0], 'data-y': c[1], 'data-z': c[2],
        'data-color': n || null,
        fill: on ? '#7fa7e0' : '#f4f6f9', stroke: '#9aa5b4', 'stroke-width': 1, 'stroke-linejoin': 'round',
        role: 'button', 'aria-pressed': String(on), 'aria-label': `cell ${c[0]}, ${c[1]}${lattice === 'triangular' ? (c[2] ? ' down' : ' up') : ''}${colourTitle(k)}`,
        onclick: () => click(k),
      }));
      if (n && colours) {
        const [X, Y] = geom.centre(c);
        svg.append(s('circle', { cx: ((X - b.minX) * u).toFixed(1), cy: ((Y - b.minY) * u).toFixed(1), r: (u * (lattice === 'triangular' ? 0.16 : 0.22)).toFixed(1),
          fill: colours.color(n), stroke: '#1b1f24', 'stroke-width': 0.8, 'pointer-events': 'none', class: 'cell-mark', 'data-color': n }));
      }
    }
    return svg;
  }

  function sync() {
    wIn.value = box.w; hIn.value = box.h; lIn.value = box.l;
    clear(grids);
    const plane = isPlane(lattice);
    lIn.disabled = plane;
    tipBtn.hidden = plane;
    if (plane) grids.append(planeGrid());
    for (let z = 0; z < (plane ? 0 : box.l); z++) {
      const g = h('div', { class: 'custom-grid', 'data-z': z });
      g.style.gridTemplateColumns = `repeat(${box.w}, 1.6rem)`;
      for (let y = 0; y < box.h; y++) for (let x = 0; x < box.w; x++) {
        const k = key(x, y, z);
        const on = cells.has(k), n = on ? colors.get(k) || 0 : 0;
        g.append(h('button', {
          type: 'button', class: `custom-cell${on ? ' on' : ''}`, 'aria-pressed': String(on), 'data-color': n || null,
          'aria-label': `${box.l === 1 ? `cell ${x}, ${y}` : `cell ${x}, ${y}, layer ${z}`}${colourTitle(k)}`,
          title: n ? `colour ${n}` : null,
          onclick: () => click(k),
        }, n && colours ? h('span', { class: 'cell-dot', style: `background:${colours.color(n)}` }) : null));
      }
      grids.append(box.l > 1 ? h('figure', { class: 'edit-layer' }, g, h('figcaption', { class: 'muted', text: `layer ${z}` })) : g);
    }
    clear(view);
    if (cells.size && !plane) view.append(isoPiece([...cells].map(parse), '#7fa7e0', 70));
    cellsBtn.setAttribute('aria-pressed', String(brush === 'cells'));
    colourBtn.setAttribute('aria-pressed', String(brush === 'colour'));
    undoBtn.disabled = undo.length === 0;
    redoBtn.disabled = redo.length === 0;
    saveBtn.textContent = replacing ? `Save ${replacing}` : 'Add this piece';
  }

  /* The cells moved by f, kept when they all stay in the box (the box
   * grows to hold a turned piece). */
  function transform(f, grow) {
    const before = [...cells];
    const moved = before.map(parse).map(f);
    const movedColors = before.map((k) => colors.get(k) || 0);
    const set = (list, cols) => {
      cells = new Set(list.map((c) => key(...c)));
      colors = new Map();
      list.forEach((c, i) => { if (cols?.[i]) colors.set(key(...c), cols[i]); });
    };
    if (grow) {
      const n = normalizeColoured(lattice, moved, movedColors);
      const nb = { w: Math.max(...n.cells.map((c) => c[0])) + 1, h: Math.max(...n.cells.map((c) => c[1])) + 1, l: isPlane(lattice) ? 1 : Math.max(...n.cells.map((c) => c[2])) + 1 };
      if (nb.w > EDIT_MAX || nb.h > EDIT_MAX || nb.l > EDIT_MAX) { onNote('Turned, the piece would not fit the editor.'); return; }
      change(() => {
        box = { w: Math.max(box.w, nb.w), h: Math.max(box.h, nb.h), l: Math.max(box.l, nb.l) };
        set(n.cells, n.colors);
      });
      return;
    }
    if (moved.some(([x, y, z]) => x < 0 || y < 0 || z < 0 || x >= box.w || y >= box.h || (!isPlane(lattice) && z >= box.l))) {
      onNote('The piece is at the edge of the editor that way.');
      return;
    }
    change(() => set(moved, movedColors));
  }
  const act = (testid, text, title, fn) => h('button', { type: 'button', class: 'btn btn-small', 'data-testid': testid, text, title, onclick: fn });
  const brushBtn = (testid, text, title, which) => h('button', { type: 'button', class: 'btn btn-small', 'data-testid': testid, text, title,
    'aria-pressed': 'false', onclick: () => { brush = which; sync(); } });
  const cellsBtn = brushBtn('edit-brush-cells', 'Cells', 'A click turns a cell on or off', 'cells');
  const colourBtn = brushBtn('edit-brush-colour', 'Colour', 'A click paints a cell the colour chosen (0: neutral); again, back to neutral', 'colour');
  const tipBtn = act('edit-tip', '⤵ Tip over', 'A quarter turn about the x axis: layers become rows', () => transform(([x, y, z]) => [x, -z, y], true));

  // the box follows the fields as they are typed in, so that leaving a
  // field (a click on the grid) rebuilds nothing under the pointer
  for (const [input, k] of [[wIn, 'w'], [hIn, 'h'], [lIn, 'l']]) {
    const resize = () => {
      if (input.value === '') return;
      const v = Math.max(1, Math.min(EDIT_MAX, Math.round(Number(input.value)) || 1));
      if (v === box[k]) return;
      change(() => {
        box = { ...box, [k]: v };
        for (const c of [...cells]) { const [x, y, z] = parse(c); if (x >= box.w || y >= box.h || (!isPlane(lattice) && z >= box.l)) { cells.delete(c); colors.delete(c); } }
      });
    };
    input.addEventListener('input', resize);
    input.addEventListener('change', resize);
  }
  undoBtn.addEventListener('click', () => { if (undo.length) { redo.push(snapshot()); restore(undo.pop()); } });
  redoBtn.addEventListener('click', () => { if (redo.length) { undo.push(snapshot()); restore(redo.pop()); } });
  saveBtn.addEventListener('click', () => {
    if (cells.size === 0) { onNote('Click cells of the grid first.'); return; }
    const keys = [...cells];
    const n = normalizeColoured(lattice, keys.map(parse), keys.map((k) => colors.get(k) || 0));
    const piece = { name: name.value.trim() || 'A', cells: n.cells, colors: n.colors };
    const was = replacing;
    replacing = null;
    onSave(piece, was);
    cells = new Set();
    colors = new Map();
    undo.length = 0; redo.length = 0;
    sync();
  });

  const el = h('div', { class: 'piece-editor', 'data-testid': 'piece-editor' },
    h('div', { class: 'designer-toolbar' },
      h('label', {}, 'Name ', name), h('label', {}, 'Box ', wIn, '×', hIn, '×', lIn)),
    h('div', { class: 'designer-toolbar', role: 'toolbar', 'aria-label': 'Piece tools' },
      act('edit-turn', '⟳ Turn', 'A quarter turn about the vertical axis (a sixth of a turn on triangles and hexagons)',
        () => transform((c) => (isPlane(lattice) ? turnCell(lattice, c) : [-c[1], c[0], c[2]]), true)),
      tipBtn,
      act('edit-mirror', '⇋ Mirror', 'Its mirror image', () => (isPlane(lattice)
        ? transform((c) => mirrorCell(lattice, c), true)
        : transform(([x, y, z]) => [box.w - 1 - x, y, z], false))),
      act('edit-left', '←', 'Shift left', () => transform(([x, y, z]) => [x - 1, y, z], false)),
      act('edit-right', '→', 'Shift right', () => transform(([x, y, z]) => [x + 1, y, z], false)),
      // the plane lattices are drawn y up
      act('edit-up', '↑', 'Shift up', () => transform(([x, y, z]) => [x, y + (isPlane(lattice) ? 1 : -1), z], false)),
      act('edit-down', '↓', 'Shift down', () => transform(([x, y, z]) => [x, y - (isPlane(lattice) ? 1 : -1), z], false)),
      undoBtn, redoBtn,
      act('edit-clear', 'Clear', 'Start over', () => change(() => { cells = new Set(); colors = new Map(); replacing = null; }))),
    colours ? h('div', { class: 'designer-toolbar', role: 'toolbar', 'aria-label': 'Piece brush' },
      cellsBtn, colourBtn, colours.el) : null,
    h('div', { class: 'edit-area' }, grids, view),
    h('div', { class: 'designer-toolbar' }, saveBtn));
  sync();

  return {
    el,
    /** Open a piece for editing; false when it is larger than the editor. */
    edit(piece) {
      const n = isPlane(lattice) ? normalizePlane(lattice, piece.cells) : normalize(piece.cells);
      const nb = { w: Math.max(...n.map((c) => c[0])) + 1, h: Math.max(...n.map((c) => c[1])) + 1, l: isPlane(lattice) ? 1 : Math.max(...n.map((c) => c[2])) + 1 };
      if (nb.w > EDIT_MAX || nb.h > EDIT_MAX || nb.l > EDIT_MAX) return false;
      const cols = normalizeColoured(lattice, piece.cells, piece.colors).colors;
      change(() => {
        box = { w: Math.max(nb.w, 3), h: Math.max(nb.h, 3), l: nb.l };
        cells = new Set(n.map((c) => key(...c)));
        colors = new Map();
        n.forEach((c, i) => { if (cols?.[i]) colors.set(key(...c), cols[i]); });
        replacing = piece.name;
      });
      name.value = piece.name;
      return true;
    },
    /** Draw on another lattice (the designer's): the piece drawn so far is dropped. */
    setLattice(next) {
      if (next === lattice) return;
      lattice = next;
      box = { w: 5, h: 5, l: 1 };
      cells = new Set();
      colors = new Map();
      replacing = null;
      undo.length = 0; redo.length = 0;
      sync();
    },
    /** The colour brush, chosen (a swatch was picked). */
    useColour() { brush = 'colour'; sync(); },
    /** Draw again (the colours' look changed: another palette). */
    redraw() { sync(); },
  };
}

/** A small isometric drawing of a piece: each cube's three visible faces,
 *  drawn back to front, so that a solid piece reads as one. */
export function isoPiece(cellsIn, color, size = 44) {
  const cells = normalize(cellsIn);
  const set = new Set(cells.map((c) => key(...c)));
  // screen position of the point (x, y, z): x to the lower right, y to the lower left, z up
  const px = (x, y) => (x - y) * 0.866;
  const py = (x, y, z) => (x + y) * 0.5 - z;
  const pts = [];
  for (const [x, y, z] of cells) for (const [dx, dy, dz] of [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 1]])
    pts.push([px(x + dx, y + dy), py(x + dx, y + dy, z + dz)]);
  const minX = Math.min(...pts.map((p) => p[0])), maxX = Math.max(...pts.map((p) => p[0]));
  const minY = Math.min(...pts.map((p) => p[1])), maxY = Math.max(...pts.map((p) => p[1]));
  const u = Math.min(size / Math.max(maxX - minX, maxY - minY, 1), 14);
  const P = (x, y, z) => `${((px(x, y) - minX) * u + 1).toFixed(1)},${((py(x, y, z) - minY) * u + 1).toFixed(1)}`;
  const shade = (f) => { /* the colour darkened to f percent: the sides in shadow */
    const n = parseInt(String(color).replace('#', ''), 16);
    if (!/^#[0-9a-f]{6}$/i.test(color)) return color;
    const c = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => Math.round((v * f) / 100));
    return `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
  };
  const faces = [];
  // back to front: larger x + y + z is nearer the viewer (up, and towards the lower edge)
  for (const [x, y, z] of [...cells].sort((a, b) => (a[0] + a[1] + a[2]) - (b[0] + b[1] + b[2]) || a[2] - b[2])) {
    if (!set.has(key(x, y, z + 1))) faces.push(s('polygon', { points: [P(x, y, z + 1), P(x + 1, y, z + 1), P(x + 1, y + 1, z + 1), P(x, y + 1, z + 1)].join(' '), fill: color }));
    if (!set.has(key(x + 1, y, z))) faces.push(s('polygon', { points: [P(x + 1, y, z), P(x + 1, y + 1, z), P(x + 1, y + 1, z + 1), P(x + 1, y, z + 1)].join(' '), fill: shade(75) }));
    if (!set.has(key(x, y + 1, z))) faces.push(s('polygon', { points: [P(x, y + 1, z), P(x + 1, y + 1, z), P(x + 1, y + 1, z + 1), P(x, y + 1, z + 1)].join(' '), fill: shade(55) }));
  }
  const W = (maxX - minX) * u + 2, H = (maxY - minY) * u + 2;
  return s('svg', { class: 'piece-iso', width: W, height: H, viewBox: `0 0 ${W} ${H}`, 'aria-hidden': 'true', stroke: '#33404f', 'stroke-width': 0.6 }, faces);
}
