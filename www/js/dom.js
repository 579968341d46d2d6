// dom.js — tiny element builders for HTML and SVG, and a file-download helper.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs, children, isSvg) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'text') el.textContent = v;
    // through the CSSOM: the Content-Security-Policy refuses style attributes
    else if (k === 'style') el.style.cssText = v;
    else if (k === 'class' && !isSvg) el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k in el && !isSvg && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** h('button', {class: 'btn', onclick: fn}, 'Label') */
export function h(tag, attrs, ...children) {
  return apply(document.createElement(tag), attrs, children, false);
}

/** s('rect', {x: 0, y: 0}) — SVG element. */
export function s(tag, attrs, ...children) {
  return apply(document.createElementNS(SVG_NS, tag), attrs, children, true);
}

export function clear(el) { while (el.firstChild) el.firstChild.remove(); return el; }

/** Triggers a download of a Blob under the given file name. */
export function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A file-name-safe slug of a puzzle name. */
export function slug(name) {
  return String(name || 'puzzle').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'puzzle';
}
