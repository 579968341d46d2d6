// app.js — entry point: hash router (#/, #/submit, #/docs/NAME.md, #/designer (and
// #/designer/job/{id}), #/batches, #/batches/{id}, #/jobs/{id} and its
// views #/jobs/{id}/solutions/{n}, /gallery/{page}, /compare/{a}/{b}), nav
// state, the API-token form, and the body[data-ready] flag for tests.  A
// new address within the same job's page goes to that page's setParams
// instead of building the page again.

import { getToken, setToken, onAuthRequired } from './api.js';
import * as jobsPage from './pages/jobs.js';
import * as submitPage from './pages/submit.js';
import * as jobPage from './pages/job.js';
import * as designerPage from './pages/designer.js';
import * as batchesPage from './pages/batches.js';
import * as docsPage from './pages/docs.js';
import { h, clear } from './dom.js';

const main = document.getElementById('main');
let current = null; // { destroy() } of the mounted page
let navSeq = 0;

function route(hash) {
  const path = (hash || '').replace(/^#/, '') || '/';
  let m;
  if (path === '/' || path === '') return { page: jobsPage, params: {}, nav: 'jobs' };
  if (path === '/submit') return { page: submitPage, params: {}, nav: 'submit' };
  if (path === '/designer') return { page: designerPage, params: {}, nav: 'designer' };
  if ((m = path.match(/^\/designer\/job\/(\d+)$/))) return { page: designerPage, params: { id: `job${m[1]}`, job: m[1] }, nav: 'designer' };
  if (path === '/batches') return { page: batchesPage, params: {}, nav: 'batches' };
  if ((m = path.match(/^\/docs\/([\w-]+\.md)$/))) return { page: docsPage, params: { id: m[1], doc: m[1] }, nav: 'docs' };
  if ((m = path.match(/^\/batches\/(\d+)$/))) return { page: batchesPage, params: { id: m[1] }, nav: 'batches' };
  if ((m = path.match(/^\/jobs\/([^/]+)(\/.*)?$/))) {
    const params = jobView(m[2] || '');
    if (!params) return null;
    return { page: jobPage, params: { id: decodeURIComponent(m[1]), ...params }, nav: 'jobs' };
  }
  return null;
}

/** The view of a job page named by the rest of its address, or null. */
function jobView(rest) {
  const n = (t) => Number(t);
  let m;
  if (rest === '' || rest === '/') return { view: 'solution', n: null };
  if ((m = rest.match(/^\/solutions\/(\d+)$/)) && n(m[1]) >= 1) return { view: 'solution', n: n(m[1]) };
  if ((m = rest.match(/^\/gallery(?:\/(\d+))?$/))) return { view: 'gallery', page: Math.max(1, n(m[1] || 1)) };
  if ((m = rest.match(/^\/compare\/(\d+)\/(\d+)$/)) && n(m[1]) >= 1 && n(m[2]) >= 1) return { view: 'compare', a: n(m[1]), b: n(m[2]) };
  return null;
}

async function navigate() {
  const seq = ++navSeq;
  delete document.body.dataset.ready;
  const r = route(location.hash);
  if (r && current && current.page === r.page && current.params.id === r.params.id && current.setParams) {
    try { await current.setParams(r.params); } catch { /* the page shows its own error */ }
    if (seq === navSeq) document.body.dataset.ready = '1';
    return;
  }
  if (current) { try { current.destroy(); } catch { /* ignore */ } current = null; }
  clear(main);
  for (const a of document.querySelectorAll('.nav a')) {
    const active = r && a.dataset.testid === `nav-${r.nav}`;
    if (active) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (!r) {
    document.title = 'Not found · Tessera';
    main.append(h('div', { class: 'container' },
      h('h1', { text: 'Page not found' }),
      h('p', {}, 'There is nothing at this address. ', h('a', { href: '#/', text: 'Back to the jobs' }))));
    document.body.dataset.ready = '1';
    return;
  }
  const mounted = r.page.mount(main, r.params);
  current = { ...mounted, page: r.page, params: r.params, destroy: mounted.destroy, setParams: mounted.setParams };
  try { await mounted.ready; } catch { /* the page shows its own error */ }
  if (seq === navSeq) document.body.dataset.ready = '1';
}

// --- API token form -------------------------------------------------------
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token-input');
const tokenToggle = document.getElementById('token-toggle');
const tokenNote = document.getElementById('token-note');

function showTokenForm(show, note = '') {
  tokenForm.hidden = !show;
  tokenToggle.setAttribute('aria-expanded', String(show));
  tokenNote.textContent = note;
  if (show) tokenInput.value = getToken();
}

tokenToggle.addEventListener('click', () => {
  showTokenForm(tokenForm.hidden);
  if (!tokenForm.hidden) tokenInput.focus();
});
tokenForm.addEventListener('submit', (e) => {
  e.preventDefault();
  setToken(tokenInput.value.trim());
  showTokenForm(false);
  tokenToggle.textContent = getToken() ? 'API token ✓' : 'API token';
  // Reload the page only when reading failed; otherwise keep what was typed.
  if (readRefused) { readRefused = false; navigate(); }
});
document.getElementById('token-clear').addEventListener('click', () => {
  setToken('');
  tokenInput.value = '';
  tokenToggle.textContent = 'API token';
  tokenNote.textContent = 'Token cleared.';
});
let readRefused = false;
onAuthRequired((err, method) => {
  if (method === 'GET') readRefused = true;
  showTokenForm(true, getToken() ? 'The server refused this token.' : 'The server needs an API token for this.');
  tokenInput.focus();
});
if (getToken()) tokenToggle.textContent = 'API token ✓';

document.getElementById('skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', navigate);
navigate();
