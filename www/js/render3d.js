// render3d.js — canvas 3D view of polycubes: unit cubes drawn as shaded quads
// sorted back to front (painter's algorithm).  Drag (mouse/touch) or arrow
// keys rotate.  Made to be read at a glance on a 4×4×4 cube:
//  - piece outlines are thick and dark, the cell edges inside a flat face
//    of one piece thin and faint, so pieces stand apart from the grid;
//  - shading stays light (0.72 to 1 of the colour), so neighbouring hues
//    of the palette remain distinct on every face;
//  - pieces can be hidden, and shown only up to a step of the assembly
//    (bottom-up order, assemblyOrder());
//  - explode(f) pushes each piece out along its centroid far enough (at
//    f = 1) that the boxes around any two pieces are apart, inner pieces
//    included;
//  - pieceAt(x, y) says which piece is under a point (hover, tap).
//
// World axes: x to the right, z (layer) up, y toward the viewer, so that the
// top view looks like the layer drawings (y downward).

import { hexToRgb } from './colors.js';

// Face normals (in puzzle coordinates) with their 4 corners as unit offsets.
const FACES = [
  { n: [1, 0, 0], c: [[1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1]] },
  { n: [-1, 0, 0], c: [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 0]] },
  { n: [0, 1, 0], c: [[0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 1, 0]] },
  { n: [0, -1, 0], c: [[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]] },
  { n: [0, 0, 1], c: [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]] },
  { n: [0, 0, -1], c: [[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0]] },
];
// For each face, each edge's direction across it (in the face's plane): the
// edge's midpoint minus the face's centre, doubled.
for (const f of FACES) {
  const mid = [0, 1, 2].map((k) => f.c.reduce((a, c) => a + c[k], 0) / 4);
  f.across = f.c.map((a, i) => {
    const b = f.c[(i + 1) % 4];
    return [0, 1, 2].map((k) => Math.round(a[k] + b[k] - 2 * mid[k]));
  });
}

const LIGHT = (() => { const v = [-0.45, 0.75, 0.55]; const l = Math.hypot(...v); return v.map((x) => x / l); })();
const GAP = 0.35; // cells between the boxes of two pieces fully exploded
const key = (x, y, z) => `${x},${y},${z}`;

export class Viewer3D {
  /**
   * canvas: the <canvas>; pieces: [{name, color, cells: [[x,y,z]]}]
   * opts.height: CSS height (px) or null for square-ish; opts.interactive;
   * opts.onPick(name | null, cssX, cssY): the piece under the pointer
   * (hover, or a tap without dragging).
   */
  constructor(canvas, pieces, opts = {}) {
    this.canvas = canvas;
    this.opts = opts;
    this.yaw = opts.yaw ?? -0.6;
    this.pitch = opts.pitch ?? 0.55;
    this.explode = 0;
    this.hidden = new Set();
    this.shown = null; // pieces placed so far in the assembly, or null: all
    this.hits = [];
    this.setPieces(pieces);
    this.onResize = () => this.draw();
    window.addEventListener('resize', this.onResize);
    if (opts.interactive !== false) this.bindInput();
  }

  setPieces(pieces) {
    this.pieces = pieces.map((p) => {
      const cells = p.cells.map((c) => [c[0], c[1], c[2] || 0]);
      const set = new Set(cells.map((c) => key(...c)));
      const n = cells.length || 1;
      const cen = [0, 0, 0], lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      for (const c of cells) {
        for (let k = 0; k < 3; k++) {
          cen[k] += c[k] + 0.5;
          lo[k] = Math.min(lo[k], c[k]);
          hi[k] = Math.max(hi[k], c[k] + 1);
        }
      }
      return { ...p, cells, set, rgb: hexToRgb(p.color), centroid: cen.map((v) => v / n), lo, hi };
    });
    // Puzzle centre: middle of the bounding box of all cells.
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const p of this.pieces) for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], p.lo[k]); hi[k] = Math.max(hi[k], p.hi[k]); }
    if (lo[0] === Infinity) { lo.fill(0); hi.fill(1); }
    this.centre = lo.map((v, k) => (v + hi[k]) / 2);
    this.extent = Math.max(1, ...hi.map((v, k) => v - lo[k]));
    this.spread = this.fullSpread();
    // Bottom-up: lowest layer first, then by centroid height, depth, left to right.
    this.order = this.pieces.map((p, i) => i).sort((a, b) => {
      const p = this.pieces[a], q = this.pieces[b];
      return p.lo[2] - q.lo[2] || p.centroid[2] - q.centroid[2] || p.centroid[1] - q.centroid[1] || p.centroid[0] - q.centroid[0];
    });
    this.draw();
  }

  /** The explode factor that separates the boxes of every two pieces: per
   *  pair, the least factor at which they are apart along some axis. */
  fullSpread() {
    let need = 1.2;
    const P = this.pieces;
    for (let i = 0; i < P.length; i++) {
      for (let j = i + 1; j < P.length; j++) {
        let pair = Infinity;
        for (let k = 0; k < 3; k++) {
          const d = P[i].centroid[k] - P[j].centroid[k];
          const apart = Math.max(P[i].lo[k] - P[j].hi[k], P[j].lo[k] - P[i].hi[k]);
          if (apart >= GAP) { pair = 0; break; }
          if (Math.abs(d) > 1e-9) {
            const [a, b] = d > 0 ? [P[i], P[j]] : [P[j], P[i]];
            pair = Math.min(pair, (GAP + b.hi[k] - a.lo[k]) / Math.abs(d));
          }
        }
        if (pair !== Infinity) need = Math.max(need, pair);
      }
    }
    return Math.min(need, 12);
  }

  /** Indices of the pieces in the order of the assembly steps. */
  assemblyOrder() { return this.order.slice(); }

  setExplode(f) { this.explode = f; this.draw(); }

  /** Names of the pieces not drawn (every copy of a name). */
  setHidden(names) { this.hidden = new Set(names); this.draw(); }

  /** Show the first k pieces of the assembly order only (null: all). */
  setShown(k) { this.shown = k; this.draw(); }

  visible(i) {
    if (this.hidden.has(this.pieces[i].name)) return false;
    if (this.shown == null) return true;
    return this.order.indexOf(i) < this.shown;
  }

  bindInput() {
    const c = this.canvas;
    let drag = null;
    c.style.touchAction = 'none';
    const local = (e) => { const r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    c.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, yaw: this.yaw, pitch: this.pitch, moved: false };
      c.setPointerCapture(e.pointerId);
      c.classList.add('dragging');
    });
    c.addEventListener('pointermove', (e) => {
      if (!drag) {
        if (e.pointerType === 'mouse') this.pick(...local(e));
        return;
      }
      if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 4) drag.moved = true;
      this.yaw = drag.yaw + (e.clientX - drag.x) * 0.01;
      this.pitch = Math.max(-1.5, Math.min(1.5, drag.pitch + (e.clientY - drag.y) * 0.01));
      this.requestDraw();
    });
    const end = (e) => {
      if (drag && !drag.moved && e.type === 'pointerup') this.pick(...local(e)); // a tap names the piece
      drag = null;
      c.classList.remove('dragging');
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', (e) => { if (!drag && e.pointerType === 'mouse') this.opts.onPick?.(null, 0, 0); });
    c.addEventListener('keydown', (e) => {
      const step = 0.12;
      if (e.key === 'ArrowLeft') this.yaw -= step;
      else if (e.key === 'ArrowRight') this.yaw += step;
      else if (e.key === 'ArrowUp') this.pitch = Math.max(-1.5, this.pitch - step);
      else if (e.key === 'ArrowDown') this.pitch = Math.min(1.5, this.pitch + step);
      else return;
      e.preventDefault();
      this.requestDraw();
    });
  }

  pick(x, y) { this.opts.onPick?.(this.pieceAt(x, y), x, y); }

  /** The name of the piece drawn on top at CSS pixel (x, y) of the canvas, or null. */
  pieceAt(x, y) {
    const dpr = this.canvas.width / (this.canvas.clientWidth || this.canvas.width);
    const px = x * dpr, py = y * dpr;
    for (let i = this.hits.length - 1; i >= 0; i--) {
      const { poly, piece } = this.hits[i];
      let inside = false;
      for (let a = 0, b = poly.length - 1; a < poly.length; b = a++) {
        const [xa, ya] = poly[a], [xb, yb] = poly[b];
        if ((ya > py) !== (yb > py) && px < ((xb - xa) * (py - ya)) / (yb - ya) + xa) inside = !inside;
      }
      if (inside) return this.pieces[piece].name;
    }
    return null;
  }

  requestDraw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  /** Puzzle point → view space [sx, sy(up), depth(toward viewer)]. */
  transform(p) {
    const X = p[0] - this.centre[0], Y = p[2] - this.centre[2], Z = p[1] - this.centre[1];
    const cy = Math.cos(this.yaw), sy = Math.sin(this.yaw);
    const cp = Math.cos(this.pitch), sp = Math.sin(this.pitch);
    const x1 = X * cy + Z * sy, z1 = -X * sy + Z * cy;
    return [x1, Y * cp - z1 * sp, Y * sp + z1 * cp];
  }

  rotateNormal(n) {
    const X = n[0], Y = n[2], Z = n[1];
    const cy = Math.cos(this.yaw), sy = Math.sin(this.yaw);
    const cp = Math.cos(this.pitch), sp = Math.sin(this.pitch);
    const x1 = X * cy + Z * sy, z1 = -X * sy + Z * cy;
    return [x1, Y * cp - z1 * sp, Y * sp + z1 * cp];
  }

  draw() {
    const canvas = this.canvas;
    const cssW = canvas.clientWidth || canvas.parentElement?.clientWidth || 300;
    const cssH = this.opts.height || Math.round(Math.min(cssW * (cssW < 500 ? 0.72 : 0.8), 520));
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(cssW * dpr) || canvas.height !== Math.round(cssH * dpr)) {
      canvas.width = Math.round(cssW * dpr);
      canvas.height = Math.round(cssH * dpr);
      canvas.style.height = `${cssH}px`;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = this.opts.background || '#f7f9fb';
    ctx.fillRect(0, 0, canvas.width, canvas.height);

    // Piece offsets for the explode view (proportional to the centroid's distance).
    const k = this.explode * this.spread;
    const quads = [];
    let radius = 0.5;
    this.pieces.forEach((p, pi) => {
      if (!this.visible(pi)) return;
      const off = p.centroid.map((v, i) => (v - this.centre[i]) * k);
      for (const [x, y, z] of p.cells) {
        for (const f of FACES) {
          if (p.set.has(key(x + f.n[0], y + f.n[1], z + f.n[2]))) continue; // hidden inside the piece
          const n = this.rotateNormal(f.n);
          if (n[2] <= 1e-6) continue; // back face
          const pts = f.c.map((d) => this.transform([x + d[0] + off[0], y + d[1] + off[1], z + d[2] + off[2]]));
          let depth = 0;
          for (const q of pts) { depth += q[2]; radius = Math.max(radius, Math.hypot(q[0], q[1], q[2])); }
          // An edge is a faint cell edge when the piece's face goes on flat
          // across it; else (a fold, or another piece) a piece outline.
          const outline = f.across.map((d) => {
            const nx = x + d[0], ny = y + d[1], nz = z + d[2];
            return !(p.set.has(key(nx, ny, nz)) && !p.set.has(key(nx + f.n[0], ny + f.n[1], nz + f.n[2])));
          });
          const light = 0.72 + 0.28 * Math.max(0, n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2]);
          quads.push({ pts, depth: depth / 4, rgb: p.rgb, light, outline, piece: pi });
        }
      }
    });
    // Also fit the unexploded radius so the scale does not jump for tiny pieces.
    radius = Math.max(radius, this.extent * 0.5);
    quads.sort((a, b) => a.depth - b.depth);

    const W = canvas.width, H = canvas.height;
    const scale = (Math.min(W, H) * 0.46) / radius;
    const D = radius * 5; // camera distance for a gentle perspective
    const proj = (q) => {
      const f = D / (D - q[2]);
      return [W / 2 + q[0] * scale * f, H / 2 - q[1] * scale * f];
    };
    const thick = Math.max(1.6, Math.min(3.2, scale / 14)) * (this.opts.height ? 0.7 : 1);
    ctx.lineJoin = 'round';
    ctx.lineCap = 'round';
    this.hits = [];
    for (const q of quads) {
      const pts = q.pts.map(proj);
      ctx.beginPath();
      pts.forEach(([sx, sy], i) => { if (i) ctx.lineTo(sx, sy); else ctx.moveTo(sx, sy); });
      ctx.closePath();
      const [r, g, b] = q.rgb;
      ctx.fillStyle = `rgb(${Math.round(r * q.light)}, ${Math.round(g * q.light)}, ${Math.round(b * q.light)})`;
      ctx.fill();
      // the fill's own hairline seam, then faint cell edges, then outlines
      ctx.strokeStyle = ctx.fillStyle;
      ctx.lineWidth = 1;
      ctx.stroke();
      for (const bold of [false, true]) {
        ctx.beginPath();
        for (let i = 0; i < 4; i++) {
          if (q.outline[i] !== bold) continue;
          ctx.moveTo(...pts[i]);
          ctx.lineTo(...pts[(i + 1) % 4]);
        }
        ctx.strokeStyle = bold ? '#15191e' : 'rgba(20, 24, 30, 0.22)';
        ctx.lineWidth = bold ? thick : Math.max(0.75, dpr * 0.75);
        ctx.stroke();
      }
      this.hits.push({ poly: pts, piece: q.piece });
    }
  }

  toBlob() {
    return new Promise((resolve, reject) => {
      this.canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png');
    });
  }

  destroy() {
    window.removeEventListener('resize', this.onResize);
    if (this.frame) cancelAnimationFrame(this.frame);
  }
}
