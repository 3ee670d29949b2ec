/** `#/audit`: the project's audit log, filtered and paged on the server. */
import { get, onSurface } from '../api.js';
import { h, localToIso, time } from '../dom.js';
import { badge, empty, field, pageHeader, pager, section, table } from '../ui.js';
import { AUDITED_ACTIONS } from '../vocabulary.js';
import { bankHref } from './spaces.js';

const statusKind = (s) => (s >= 500 ? 'error' : s >= 400 ? 'warn' : 'ok');

export async function auditPage(view, _params, query) {
  const bank = h('input', {
    name: 'bank',
    value: query.get('bank') ?? '',
    autocomplete: 'off',
    maxlength: '256',
  });
  const action = h('input', {
    name: 'action',
    value: query.get('action') ?? '',
    autocomplete: 'off',
    maxlength: '128',
    list: 'audit-actions',
  });
  const since = h('input', { type: 'datetime-local', name: 'since' });
  const until = h('input', { type: 'datetime-local', name: 'until' });
  const actions = h(
    'datalist',
    { id: 'audit-actions' },
    AUDITED_ACTIONS.map((a) => h('option', { value: a })),
  );

  const list = pager('Audit entries', {
    load: (cursor) =>
      get(onSurface('/audit'), {
        bank: bank.value.trim(),
        action: action.value.trim(),
        since: localToIso(since.value),
        until: localToIso(until.value),
        limit: 50,
        cursor,
      }),
    render: (items) =>
      items.length
        ? table(
            'Audit entries',
            [
              { label: 'When', cell: (e) => time(e.at) },
              {
                label: 'Actor',
                cell: (e) => [
                  e.actor?.type ?? '—',
                  e.actor?.key_id ? [' ', h('code', null, e.actor.key_id)] : null,
                ],
              },
              { label: 'Action', cell: (e) => h('code', null, e.action) },
              {
                label: 'Bank',
                cell: (e) => (e.bank_id ? h('a', { href: bankHref(e.bank_id) }, e.bank_id) : '—'),
              },
              { label: 'Space', cell: (e) => e.space_id ?? '—' },
              { label: 'Status', cell: (e) => badge(String(e.status), statusKind(e.status)) },
              { label: 'Request id', cell: (e) => h('code', { class: 'small' }, e.request_id) },
            ],
            items,
          )
        : empty('No entries match.'),
  });

  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter the audit log',
      novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        list.reload();
      },
      onreset: () => queueMicrotask(() => list.reload()),
    },
    field('Bank', bank),
    field('Action', action, { hint: 'Exact name, e.g. memories.retain.' }),
    field('Since', since),
    field('Until', until),
    actions,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Apply'),
      h('button', { type: 'reset', class: 'secondary' }, 'Clear'),
    ),
  );
  view.append(
    pageHeader('Audit log', {
      lead: 'Every mutating request and every denied one (401/403), newest first. Entries are append-only.',
    }),
    section('Filter', form),
    section('Entries', list.element),
  );
  await list.reload();
}
