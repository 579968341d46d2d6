// render3d.js — canvas 3D view of polycubes: unit cubes drawn as shaded quads
// sorted back to front (painter's algorithm). Drag (mouse/touch) or arrow keys
// rotate; explode(f) pushes each piece out from the centre along its centroid.
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

const LIGHT = (() => { const v = [-0.45, 0.75, 0.55]; const l = Math.hypot(...v); return v.map((x) => x / l); })();

export class Viewer3D {
  /**
   * canvas: the <canvas>; pieces: [{name, color, cells: [[x,y,z]]}]
   * opts.height: CSS height (px) or null for square-ish; opts.interactive
   */
  constructor(canvas, pieces, opts = {}) {
    this.canvas = canvas;
    this.opts = opts;
    this.yaw = opts.yaw ?? -0.6;
    this.pitch = opts.pitch ?? 0.55;
    this.explode = 0;
    this.setPieces(pieces);
    this.onResize = () => this.draw();
    window.addEventListener('resize', this.onResize);
    if (opts.interactive !== false) this.bindInput();
  }

  setPieces(pieces) {
    this.pieces = pieces.map((p) => {
      const set = new Set(p.cells.map((c) => `${c[0]},${c[1]},${c[2] || 0}`));
      const n = p.cells.length || 1;
      const cen = [0, 0, 0];
      for (const c of p.cells) { cen[0] += c[0] + 0.5; cen[1] += c[1] + 0.5; cen[2] += (c[2] || 0) + 0.5; }
      return { ...p, set, rgb: hexToRgb(p.color), centroid: cen.map((v) => v / n) };
    });
    // Puzzle centre: middle of the bounding box of all cells.
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const p of this.pieces) for (const c of p.cells) {
      for (let k = 0; k < 3; k++) { const v = c[k] || 0; lo[k] = Math.min(lo[k], v); hi[k] = Math.max(hi[k], v + 1); }
    }
    if (lo[0] === Infinity) { lo.fill(0); hi.fill(1); }
    this.centre = lo.map((v, k) => (v + hi[k]) / 2);
    this.extent = Math.max(1, ...hi.map((v, k) => v - lo[k]));
    this.draw();
  }

  setExplode(f) { this.explode = f; this.draw(); }

  bindInput() {
    const c = this.canvas;
    let drag = null;
    c.style.touchAction = 'none';
    c.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, yaw: this.yaw, pitch: this.pitch };
      c.setPointerCapture(e.pointerId);
      c.classList.add('dragging');
    });
    c.addEventListener('pointermove', (e) => {
      if (!drag) return;
      this.yaw = drag.yaw + (e.clientX - drag.x) * 0.01;
      this.pitch = Math.max(-1.5, Math.min(1.5, drag.pitch + (e.clientY - drag.y) * 0.01));
      this.requestDraw();
    });
    const end = () => { drag = null; c.classList.remove('dragging'); };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
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
    const cssH = this.opts.height || Math.round(Math.min(cssW * 0.8, 460));
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
    const k = this.explode * 1.2;
    const quads = [];
    let radius = 0.5;
    for (const p of this.pieces) {
      const off = p.centroid.map((v, i) => (v - this.centre[i]) * k);
      for (const c of p.cells) {
        const x = c[0], y = c[1], z = c[2] || 0;
        for (const f of FACES) {
          if (p.set.has(`${x + f.n[0]},${y + f.n[1]},${z + f.n[2]}`)) continue; // hidden inside the piece
          const n = this.rotateNormal(f.n);
          if (n[2] <= 1e-6) continue; // back face
          const pts = f.c.map((d) => this.transform([x + d[0] + off[0], y + d[1] + off[1], z + d[2] + off[2]]));
          let depth = 0;
          for (const q of pts) { depth += q[2]; radius = Math.max(radius, Math.hypot(q[0], q[1], q[2])); }
          const light = 0.5 + 0.5 * Math.max(0, n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2]);
          quads.push({ pts, depth: depth / 4, rgb: p.rgb, light });
        }
      }
    }
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
    ctx.lineJoin = 'round';
    ctx.lineWidth = Math.max(1, dpr);
    ctx.strokeStyle = 'rgba(20, 24, 30, 0.55)';
    for (const q of quads) {
      ctx.beginPath();
      q.pts.forEach((pt, i) => { const [sx, sy] = proj(pt); if (i) ctx.lineTo(sx, sy); else ctx.moveTo(sx, sy); });
      ctx.closePath();
      const [r, g, b] = q.rgb;
      ctx.fillStyle = `rgb(${Math.round(r * q.light)}, ${Math.round(g * q.light)}, ${Math.round(b * q.light)})`;
      ctx.fill();
      ctx.stroke();
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
