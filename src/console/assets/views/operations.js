/** Background operations of a bank (async Retain and other durable work), with status. */
import { bankUrl, del, get, isMissingRoute } from '../api.js';
import { fmtNumber, h, time } from '../dom.js';
import { OPERATION_STATUS_KINDS } from '../labels.js';
import { announce, badge, empty, errorBox, field, pager, section, select, table } from '../ui.js';
import { OPERATION_STATUSES, RUNNING_CANCELLABLE_KINDS } from '../vocabulary.js';

/**
 * What the API cancels (anything else is its 409): a pending operation of any kind, and a running
 * one of the kinds that give back what they did not store (a Retain, an upload, an import).
 */
const cancellable = (o) =>
  o.status === 'pending' || (o.status === 'processing' && RUNNING_CANCELLABLE_KINDS.includes(o.kind));

export async function operationsTab(body, profile) {
  const status = select([['', 'Any status'], ...OPERATION_STATUSES.map((s) => [s])], { name: 'status' });
  let missing = false;
  const list = pager('Operations', {
    load: async (cursor) => {
      try {
        return await get(bankUrl(profile.id, '/operations'), { status: status.value, limit: 50, cursor });
      } catch (err) {
        if (isMissingRoute(err)) {
          missing = true;
          return { items: [], next_cursor: null };
        }
        throw err;
      }
    },
    render: (items) => {
      if (missing) return errorBox(new Error('This server has no operations endpoint.'));
      return items.length
        ? table(
            'Operations',
            [
              { label: 'Id', cell: (o) => h('code', { title: o.id }, o.id.slice(0, 8)) },
              { label: 'Kind', cell: (o) => o.kind },
              { label: 'Status', cell: (o) => badge(o.status, OPERATION_STATUS_KINDS[o.status] ?? '') },
              { label: 'Items', cell: (o) => fmtNumber(o.items_count), class: 'num' },
              { label: 'Memories created', cell: (o) => fmtNumber(o.memories_created), class: 'num' },
              { label: 'Attempts', cell: (o) => fmtNumber(o.attempts), class: 'num' },
              { label: 'Created', cell: (o) => time(o.created_at) },
              { label: 'Updated', cell: (o) => time(o.updated_at) },
              { label: 'Error', cell: (o) => (o.error ? h('span', { class: 'error-text' }, o.error) : '—') },
              {
                label: 'Actions',
                cell: (o) =>
                  cancellable(o)
                    ? h(
                        'button',
                        {
                          type: 'button',
                          class: 'secondary small',
                          'aria-label': `Cancel operation ${o.id}`,
                          onclick: async () => {
                            try {
                              await del(bankUrl(profile.id, `/operations/${encodeURIComponent(o.id)}`));
                              announce('Operation cancelled.', 'success');
                              await list.refresh();
                            } catch (err) {
                              announce(err.message, 'error');
                            }
                          },
                        },
                        'Cancel',
                      )
                    : '',
              },
            ],
            items,
          )
        : empty('No operations.');
    },
  });
  const filters = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter operations',
      onsubmit: (e) => {
        e.preventDefault();
        list.reload();
      },
    },
    field('Status', status),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Apply'),
      h('button', { type: 'button', class: 'secondary', onclick: () => list.refresh() }, 'Refresh'),
    ),
  );
  body.append(section('Operations', filters, list.element));
  await list.reload();
}
