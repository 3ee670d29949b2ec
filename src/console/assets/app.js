/**
 * The console: sign-in, the page shell and a hash router. Each page is a module under
 * views/ exporting a function `(view, params, query)` that fills `view`.
 */
import { ApiError, clearSession, onUnauthorized, request, saveSession, session } from './api.js';
import { h } from './dom.js';
import { announce, errorBox, field } from './ui.js';
import { auditPage } from './views/audit.js';
import { bankPage } from './views/bank.js';
import { banksPage } from './views/banks.js';
import { projectPage, projectsPage } from './views/projects.js';
import { spacesPage } from './views/spaces.js';

const root = document.getElementById('app');

/** [pattern, page, title, operator only]; `:name` segments are URL-decoded params. */
const ROUTES = [
  ['/projects', projectsPage, 'Projects', true],
  ['/projects/:project', projectPage, 'Project', true],
  ['/spaces', spacesPage, 'Spaces'],
  ['/banks', banksPage, 'Banks'],
  ['/banks/:bank', bankPage, 'Bank'],
  ['/banks/:bank/:tab', bankPage, 'Bank'],
  ['/audit', auditPage, 'Audit log'],
];

const NAV = [
  ['#/projects', 'Projects', true],
  ['#/spaces', 'Spaces'],
  ['#/banks', 'Banks'],
  ['#/audit', 'Audit log'],
];

function match(path) {
  const parts = path.split('/').filter(Boolean);
  for (const [pattern, page, title, operatorOnly] of ROUTES) {
    const want = pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < want.length; i++) {
      const w = want[i];
      let part;
      try {
        part = decodeURIComponent(parts[i]);
      } catch {
        ok = false;
        break;
      }
      if (w.startsWith(':')) params[w.slice(1)] = part;
      else if (w !== part) ok = false;
    }
    if (ok) return { page, title, params, operatorOnly };
  }
  return null;
}

const home = () => (session()?.mode === 'operator' ? '#/projects' : '#/banks');

/** The hash as path and query: `#/audit?bank=x` -> ['/audit', URLSearchParams]. */
function currentRoute() {
  const raw = location.hash.slice(1) || '/';
  const q = raw.indexOf('?');
  return q < 0 ? [raw, new URLSearchParams()] : [raw.slice(0, q), new URLSearchParams(raw.slice(q + 1))];
}

let main;
let nav;
let firstRender = true;

function shell() {
  const s = session();
  const skip = h(
    'a',
    {
      class: 'skip',
      href: '#main',
      onclick: (e) => {
        e.preventDefault();
        main.focus();
      },
    },
    'Skip to content',
  );
  nav = h(
    'nav',
    { class: 'main-nav', 'aria-label': 'Main' },
    h(
      'ul',
      null,
      NAV.filter(([, , operatorOnly]) => !operatorOnly || s.mode === 'operator').map(([href, text]) =>
        h('li', null, h('a', { href }, text)),
      ),
    ),
  );
  main = h('main', { id: 'main', tabindex: '-1' });
  const who = s.mode === 'operator' ? 'Operator · /v1/default' : 'Project key · /v1/me';
  root.replaceChildren(
    skip,
    h(
      'header',
      { class: 'topbar' },
      h(
        'a',
        { class: 'brand', href: home() },
        h('span', { class: 'logo', 'aria-hidden': 'true' }),
        'mnemo',
        h('span', null, ' console'),
      ),
      nav,
      h(
        'div',
        { class: 'who' },
        h('span', { class: 'who-label' }, who),
        h('button', { type: 'button', class: 'ghost', onclick: () => signOut('Signed out.') }, 'Sign out'),
      ),
    ),
    main,
    h('div', { id: 'status', role: 'status', 'aria-live': 'polite', class: 'toast', hidden: true }),
  );
}

async function render() {
  if (!session()) return signInPage();
  if (!main?.isConnected) shell();
  const [path, query] = currentRoute();
  const route = match(path);
  if (!route) {
    location.replace(home());
    return;
  }
  for (const a of nav.querySelectorAll('a')) {
    const target = a.getAttribute('href').slice(1);
    if (path === target || path.startsWith(`${target}/`)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = h('div', { class: 'view' });
  main.replaceChildren(view);
  document.title = `${route.title} · mnemo console`;
  if (route.operatorOnly && session().mode !== 'operator') {
    view.append(errorBox(new Error('Projects and keys are managed with the operator token.')));
    return;
  }
  const rendering = route.page(view, route.params, query);
  // Move focus to the new page's heading for keyboard and screen reader users.
  if (!firstRender) view.querySelector('h1')?.focus();
  firstRender = false;
  await rendering;
}

function signOut(message) {
  clearSession();
  main = null;
  if (location.hash) history.replaceState(null, '', location.pathname);
  signInPage(message);
}

/** Checks a credential: the operator token on /v1/default, or a project key with `admin` on /v1/me. */
async function verify(token) {
  if (token.startsWith('mk_')) {
    try {
      await request('GET', '/v1/me/spaces', { token });
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) {
        throw new Error('This key is valid but lacks the admin scope; the console needs a key with admin.');
      }
      throw err;
    }
    return { token, mode: 'key', base: '/v1/me' };
  }
  await request('GET', '/v1/default/projects', { token: token || '' });
  return { token, mode: 'operator', base: '/v1/default' };
}

function signInPage(message) {
  document.title = 'Sign in · mnemo console';
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', spellcheck: 'false' });
  const slot = h('div');
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'signin card',
      'aria-labelledby': 'signin-title',
      onsubmit: async (e) => {
        e.preventDefault();
        button.disabled = true;
        slot.replaceChildren();
        try {
          saveSession(await verify(input.value.trim()));
          main = null;
          if (!location.hash || location.hash === '#/') location.hash = home();
          await render();
        } catch (err) {
          const e2 =
            err instanceof ApiError && err.status === 401
              ? new ApiError(401, {
                  error: { message: 'That token was not accepted (unknown, expired or revoked).' },
                })
              : err;
          slot.replaceChildren(errorBox(e2));
          input.focus();
        } finally {
          button.disabled = false;
        }
      },
    },
    h('h1', { id: 'signin-title' }, h('span', { class: 'logo', 'aria-hidden': 'true' }), 'mnemo console'),
    message ? h('p', { class: 'alert alert-info', role: 'status' }, message) : null,
    field('Operator token or project API key', input, {
      hint: 'The operator token (MNEMO_ADMIN_TOKEN) manages projects and keys on /v1/default. A project key (mk_…) with the admin scope works on /v1/me. It is kept in this tab only (sessionStorage).',
    }),
    slot,
    button,
  );
  root.replaceChildren(h('main', { id: 'main', class: 'signin-wrap' }, form));
  input.focus();
}

onUnauthorized((err) => {
  signOut(`Your session ended: ${err.message}`);
});

window.addEventListener('hashchange', () => {
  render().catch((err) => announce(String(err?.message ?? err), 'error'));
});
render().catch((err) => announce(String(err?.message ?? err), 'error'));
