/** Shared pieces of the console's pages: fields, tables, pagers, messages. */
import { ApiError } from './api.js';
import { h, uid } from './dom.js';

/** Polite announcement for screen readers and a visible toast. */
export function announce(message, kind = 'info') {
  const region = document.getElementById('status');
  if (!region) return;
  region.textContent = '';
  region.className = `toast toast-${kind}`;
  // A fresh text node so repeated messages are announced again.
  region.append(document.createTextNode(message));
  region.hidden = false;
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => {
    region.hidden = true;
  }, 5000);
}

/**
 * A labelled control with a hint and an error slot wired through aria-describedby.
 * Use `setError(control, message)` to show the server's message next to it.
 */
export function field(label, control, { hint, wide } = {}) {
  control.id ||= uid('f');
  const hintEl = hint ? h('p', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  const err = h('p', { class: 'field-error', id: `${control.id}-err`, hidden: true });
  control.setAttribute('aria-describedby', [hintEl?.id, err.id].filter(Boolean).join(' '));
  return h(
    'div',
    { class: ['field', wide && 'wide'] },
    h('label', { for: control.id }, label),
    control,
    hintEl,
    err,
  );
}

/** A checkbox with its label after it. */
export function check(label, input) {
  input.id ||= uid('c');
  return h('div', { class: 'check' }, input, h('label', { for: input.id }, label));
}

export function setError(control, message) {
  const err = document.getElementById(`${control.id}-err`);
  if (err) {
    err.textContent = message ?? '';
    err.hidden = !message;
  }
  if (message) control.setAttribute('aria-invalid', 'true');
  else control.removeAttribute('aria-invalid');
}

/** An error as a message block (role=alert), with the server's details and request id. */
export function errorBox(err, prefix) {
  const e =
    err instanceof ApiError ? err : new ApiError(0, { error: { message: String(err?.message ?? err) } });
  let message = e.message;
  if (e.status === 403 && e.requiredScope)
    message = `${e.message} (this page needs the '${e.requiredScope}' scope)`;
  return h(
    'div',
    { class: 'alert alert-error', role: 'alert' },
    h('p', null, prefix ? `${prefix}: ` : '', message),
    e.details.length
      ? h(
          'ul',
          null,
          e.details.map((d) => h('li', null, h('code', null, d.path), ' — ', d.message)),
        )
      : null,
    e.requestId ? h('p', { class: 'muted small' }, `request id ${e.requestId}`) : null,
  );
}

export const loading = (what = 'Loading') => h('p', { class: 'loading', role: 'status' }, `${what}…`);

export const empty = (text) => h('p', { class: 'empty' }, text);

export const badge = (text, kind = '') => h('span', { class: ['badge', kind && `badge-${kind}`] }, text);

/** A page heading that receives focus after navigation. */
export function pageHeader(title, { lead, crumbs, actions } = {}) {
  return h(
    'header',
    { class: 'page-header' },
    crumbs
      ? h(
          'nav',
          { class: 'crumbs', 'aria-label': 'Breadcrumb' },
          h(
            'ol',
            null,
            crumbs.map(([text, href]) => h('li', null, href ? h('a', { href }, text) : text)),
          ),
        )
      : null,
    h('div', { class: 'page-title' }, h('h1', { tabindex: '-1' }, title), actions ?? null),
    lead ? h('p', { class: 'lead' }, lead) : null,
  );
}

export const section = (title, ...children) =>
  h('section', { class: 'card', 'aria-label': title }, h('h2', null, title), ...children);

/**
 * A table inside a keyboard-scrollable region (narrow screens scroll it sideways).
 * `columns`: [{label, cell: (row) => node|string, class?}].
 */
export function table(caption, columns, rows) {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h(
      'table',
      null,
      h('caption', { class: 'sr-only' }, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((c) => h('th', { scope: 'col', class: c.class }, c.label)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            null,
            columns.map((c) =>
              h('td', { class: c.class, 'data-label': c.label }, h('div', null, c.cell(row))),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * Server-side paging by opaque cursor: keeps the cursors seen so far for "Previous".
 * `load(cursor)` returns `{items, next_cursor}`; `render(items)` draws one page.
 * Only ever one page is in the browser.
 */
export function pager(label, { load, render }) {
  const cursors = [undefined];
  let index = 0;
  let next = null;
  let seq = 0;
  const body = h('div', { class: 'page-body' });
  const status = h('span', { class: 'pager-status', 'aria-live': 'polite' });
  const prev = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => go(index - 1) },
    '← Previous',
  );
  const more = h('button', { type: 'button', class: 'secondary', onclick: () => go(index + 1) }, 'Next →');
  const nav = h('nav', { class: 'pager', 'aria-label': `${label} pages` }, prev, status, more);

  async function show() {
    const mine = ++seq;
    body.replaceChildren(loading());
    body.setAttribute('aria-busy', 'true');
    prev.disabled = true;
    more.disabled = true;
    try {
      const page = await load(cursors[index]);
      if (mine !== seq) return;
      next = page.next_cursor ?? null;
      body.replaceChildren(render(page.items ?? []));
    } catch (err) {
      if (mine !== seq) return;
      next = null;
      body.replaceChildren(errorBox(err));
    }
    body.setAttribute('aria-busy', 'false');
    prev.disabled = index === 0;
    // A single page needs no pager.
    nav.hidden = index === 0 && !next;
    more.disabled = !next;
    status.textContent = `Page ${index + 1}`;
  }

  function go(to) {
    if (to < 0) return;
    if (to > index) {
      if (!next) return;
      cursors[to] = next;
    }
    index = to;
    return show();
  }

  return {
    element: h('div', { class: 'paged' }, body, nav),
    /** Back to the first page (filters changed). */
    reload() {
      cursors.length = 1;
      index = 0;
      return show();
    },
    /** The current page again (after a delete). */
    refresh: show,
  };
}

/** Copies text; falls back to selecting it where the Clipboard API is unavailable (plain http). */
export async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    input?.select();
    return document.execCommand?.('copy') ?? false;
  }
}

/** A select from [value, text] pairs. */
export function select(options, attrs = {}) {
  return h(
    'select',
    attrs,
    options.map(([value, text]) => h('option', { value }, text ?? value)),
  );
}

/** Shows a failed form submission: field messages next to their fields, the rest on top. */
export function showFormError(form, slot, err, fieldFor = () => null) {
  for (const c of form.querySelectorAll('[aria-invalid="true"]')) setError(c);
  const unplaced = [];
  for (const d of err instanceof ApiError ? err.details : []) {
    const control = fieldFor(d.path);
    if (control) setError(control, d.message);
    else unplaced.push(d);
  }
  slot.replaceChildren(errorBox(err));
  const first = form.querySelector('[aria-invalid="true"]');
  (first ?? slot.querySelector('[role=alert]'))?.focus?.();
  return unplaced;
}

/** Clears messages of a form before it is sent again. */
export function clearFormError(form, slot) {
  for (const c of form.querySelectorAll('[aria-invalid="true"]')) setError(c);
  slot.replaceChildren();
}
