// pages/batches.js — batches of jobs: the list (#/batches) and one batch
// (#/batches/{id}) with every member's state and count, fewest solutions
// first as the API sorts them, each linked to its job page.  Both refresh
// every second while a member is unfinished.

import { h, clear } from '../dom.js';
import { getJSON } from '../api.js';
import { fmtInt, fmtTime } from '../format.js';
import { stateBadge, limitText } from '../jobui.js';

function listView(root) {
  document.title = 'Batches · Tessera';
  const body = h('tbody');
  const table = h('table', { class: 'table', 'data-testid': 'batch-list' },
    h('thead', {}, h('tr', {}, ['Batch', 'Name', 'Jobs', 'Finished', 'Solutions'].map((t) => h('th', { scope: 'col', text: t })))), body);
  const note = h('p', { class: 'muted' });
  root.append(h('div', { class: 'container' },
    h('div', { class: 'page-head' }, h('h1', { text: 'Batches' })),
    h('p', { class: 'muted' }, 'Groups of jobs submitted together: ',
      h('a', { href: '#/designer', text: 'the designer' }), ' submits a board with a hole at each position; ',
      h('code', { text: 'tessera batch submit' }), ' and POST /api/v1/batches any list of puzzles.'),
    h('section', { class: 'card card-flush' }, h('div', { class: 'table-scroll' }, table)), note));
  return async () => {
    const page = await getJSON('/api/v1/batches?limit=1000');
    clear(body);
    for (const b of page.batches) {
      body.append(h('tr', { 'data-testid': 'batch-row', 'data-batch-id': b.id },
        h('td', {}, h('a', { href: `#/batches/${b.id}`, text: `#${b.id}` })),
        h('td', {}, h('a', { href: `#/batches/${b.id}`, text: b.name || '(unnamed)' })),
        h('td', { class: 'num', text: fmtInt(b.jobs) }),
        h('td', { class: 'num', text: `${fmtInt(b.finished)} / ${fmtInt(b.jobs)}` }),
        h('td', { class: 'num', text: fmtInt(b.solutions) })));
    }
    note.textContent = page.batches.length ? '' : 'No batches yet.';
    return page.batches.some((b) => !b.done);
  };
}

function batchView(root, id) {
  document.title = `Batch ${id} · Tessera`;
  const head = h('div');
  const body = h('tbody');
  const table = h('table', { class: 'table', 'data-testid': 'batch-members' },
    h('thead', {}, h('tr', {}, ['Job', 'Variant', 'State', 'Solutions'].map((t) => h('th', { scope: 'col', text: t })))), body);
  root.append(h('div', { class: 'container' },
    h('p', {}, h('a', { href: '#/batches', text: '← All batches' })),
    head,
    h('section', { class: 'card card-flush' }, h('div', { class: 'table-scroll' }, table))));
  return async () => {
    const b = await getJSON(`/api/v1/batches/${encodeURIComponent(id)}`);
    clear(head);
    const states = Object.entries(b.states).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ');
    head.append(h('div', { class: 'page-head' }, h('h1', { text: b.name || `Batch ${b.id}` })),
      h('p', { class: 'muted', 'data-testid': 'batch-summary' },
        `${fmtInt(b.jobs)} jobs (${states}); ${fmtInt(b.solutions)} solutions in all; submitted ${fmtTime(b.created)}. `,
        'Fewest solutions first: 0 means no tiling, 1 a unique one.'));
    clear(body);
    for (const j of b.members) {
      const variant = (j.name || '').replace(/^.*, (hole at .*)$/, '$1');
      body.append(h('tr', { 'data-testid': 'member-row', 'data-job-id': j.id },
        h('td', {}, h('a', { href: `#/jobs/${j.id}`, text: `#${j.id}` })),
        h('td', {}, h('a', { href: `#/jobs/${j.id}`, 'data-testid': 'member-name', text: variant || j.name })),
        h('td', {}, stateBadge(j.state)),
        h('td', { class: 'num', 'data-testid': 'member-solutions' }, fmtInt(j.solutions),
          j.limit_reached ? h('span', { class: 'muted', text: ` (${limitText(j, true)})` }) : null)));
    }
    return !b.done;
  };
}

export function mount(root, params = {}) {
  let destroyed = false;
  let timer = null;
  const refresh = params.id ? batchView(root, params.id) : listView(root);
  const err = h('div', { class: 'alert', role: 'alert', hidden: true, 'data-testid': 'batch-error' });
  root.firstChild.prepend(err);
  const tick = async () => {
    try {
      const more = await refresh();
      err.hidden = true;
      if (more && !destroyed) timer = setTimeout(tick, 1000);
    } catch (e) {
      err.textContent = e.message;
      err.hidden = false;
    }
  };
  const ready = tick();
  return { ready, destroy() { destroyed = true; clearTimeout(timer); } };
}
