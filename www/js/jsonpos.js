// jsonpos.js — where a JSON path ($.pieces[3].rows[0], as the daemon's
// messages write it) lies in the text the user typed: a small parser that
// keeps each value's offset, so an error can point at its line.

/** '$.pieces[3].rows' → ['pieces', 3, 'rows']. */
export function pathSteps(path) {
  const steps = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]/g;
  let m;
  while ((m = re.exec(path.replace(/^\$/, '')))) steps.push(m[1] !== undefined ? m[1] : Number(m[2]));
  return steps;
}

/** The value tree of `text` ({pos, obj: Map | arr: []}), or null when it is not JSON. */
export function parseWithOffsets(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const fail = () => { throw new Error('not JSON'); };
  const lit = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
  const str = /"(?:[^"\\]|\\.)*"/y;
  function value() {
    ws();
    const node = { pos: i };
    const c = text[i];
    if (c === '{') {
      i++;
      node.obj = new Map();
      ws();
      if (text[i] === '}') { i++; return node; }
      for (;;) {
        ws();
        str.lastIndex = i;
        const k = str.exec(text);
        if (!k) fail();
        i = str.lastIndex;
        ws();
        if (text[i++] !== ':') fail();
        node.obj.set(JSON.parse(k[0]), value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== '}') fail();
        return node;
      }
    }
    if (c === '[') {
      i++;
      node.arr = [];
      ws();
      if (text[i] === ']') { i++; return node; }
      for (;;) {
        node.arr.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== ']') fail();
        return node;
      }
    }
    const re = c === '"' ? str : lit;
    re.lastIndex = i;
    if (!re.exec(text)) fail();
    i = re.lastIndex;
    return node;
  }
  try {
    const root = value();
    ws();
    return i === text.length ? root : null;
  } catch {
    return null;
  }
}

/** Offset in `text` of the deepest value along `steps` that exists, or -1. */
export function offsetOf(tree, steps) {
  let node = tree;
  if (!node) return -1;
  for (const s of steps) {
    const next = typeof s === 'number' ? node.arr?.[s] : node.obj?.get(s);
    if (!next) break;
    node = next;
  }
  return node.pos;
}

/** 1-based line of an offset. */
export function lineOf(text, offset) {
  let n = 1;
  for (let k = 0; k < offset && k < text.length; k++) if (text[k] === '\n') n++;
  return n;
}
