// pages/docs.js — the documentation (#/docs/NAME.md): a file of docs/ as
// the daemon serves it (/docs/NAME.md), rendered from its Markdown into
// DOM nodes (never HTML text, so nothing in a file can run): headings,
// paragraphs, lists, fenced code, tables, block quotes, and inline code,
// bold, italics and links; a link to another .md file stays on this page.

import { h, clear } from '../dom.js';

/** Inline Markdown into nodes: `code`, **bold**, *italic*, [text](url). */
function inline(text) {
  const out = [];
  const re = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(h('code', { text: m[2] }));
    else if (m[3]) out.push(h('strong', {}, ...inline(m[3])));
    else if (m[4]) out.push(h('em', {}, ...inline(m[4])));
    else out.push(link(m[5], m[6]));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A link: another doc stays in the dashboard; a web address opens apart. */
function link(text, url) {
  let href = url;
  const doc = url.match(/^(?:\.\/|docs\/|\.\.\/docs\/)?([\w-]+\.md)(#[\w-]*)?$/);
  if (doc) href = `#/docs/${doc[1]}`;
  else if (/^#/.test(url)) href = `#/docs/${current}`;
  else if (!/^https?:\/\//.test(url)) href = `/docs/${url}`;
  const ext = /^https?:\/\//.test(url);
  return h('a', { href, ...(ext ? { target: '_blank', rel: 'noopener' } : {}) }, ...inline(text));
}
let current = '';

const cells = (row) => row.replace(/^\s*\|/, '').replace(/\|\s*$/, '').split('|').map((c) => c.trim());

/** Markdown text into a list of block nodes. */
export function render(md) {
  const lines = md.replace(/\r\n?/g, '\n').split('\n');
  const out = [];
  let i = 0;
  const para = [];
  const flush = () => { if (para.length) { out.push(h('p', {}, ...inline(para.join(' ')))); para.length = 0; } };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (/^```/.test(line)) {
      flush();
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      i++;
      out.push(h('pre', {}, h('code', { text: code.join('\n') })));
      continue;
    }
    if ((m = line.match(/^(#{1,4})\s+(.*)$/))) {
      flush();
      const id = m[2].toLowerCase().replace(/[^\w\s-]/g, '').trim().replace(/\s+/g, '-');
      out.push(h(`h${m[1].length}`, { id }, ...inline(m[2])));
      i++;
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1])) {
      flush();
      const head = cells(line);
      i += 2;
      const rows = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]); i++) rows.push(cells(lines[i]));
      out.push(h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {}, head.map((c) => h('th', {}, ...inline(c))))),
        h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, ...inline(c)))))))));
      continue;
    }
    if ((m = line.match(/^(\s*)([-*]|\d+\.)\s+(.*)$/))) {
      flush();
      const ordered = /\d/.test(m[2]);
      const items = [];
      while (i < lines.length && (m = lines[i].match(/^(\s*)([-*]|\d+\.)\s+(.*)$/))) {
        const item = [m[3]];
        for (i++; i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*]|\d+\.)\s/.test(lines[i]); i++)
          item.push(lines[i].trim());
        items.push(h('li', {}, ...inline(item.join(' '))));
      }
      out.push(h(ordered ? 'ol' : 'ul', {}, items));
      continue;
    }
    if (/^>\s?/.test(line)) {
      flush();
      const q = [];
      for (; i < lines.length && /^>\s?/.test(lines[i]); i++) q.push(lines[i].replace(/^>\s?/, ''));
      out.push(h('blockquote', {}, ...render(q.join('\n'))));
      continue;
    }
    if (!line.trim()) { flush(); i++; continue; }
    para.push(line.trim());
    i++;
  }
  flush();
  return out;
}

export function mount(root, params = {}) {
  const name = params.doc;
  current = name;
  document.title = `${name} · Tessera`;
  const article = h('article', { class: 'card doc', 'data-testid': 'doc' });
  root.append(h('div', { class: 'container' },
    h('div', { class: 'page-head' }, h('p', { class: 'muted' }, 'Documentation · ',
      h('a', { href: `/docs/${name}`, text: `docs/${name}` }), ' (the Markdown)')),
    article));
  const ready = (async () => {
    const res = await fetch(`/docs/${name}`);
    if (!res.ok) {
      article.append(h('p', { class: 'alert', text: `No document docs/${name} here (${res.status}).` }));
      return;
    }
    clear(article);
    article.append(...render(await res.text()));
  })();
  return { ready, destroy() {} };
}
