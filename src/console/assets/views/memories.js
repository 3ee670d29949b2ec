/** Memories of a bank: a server-paged, filterable table with delete. */
import { bankUrl, del, get } from '../api.js';
import { h, time } from '../dom.js';
import { TAGS_MATCH_LABELS } from '../labels.js';
import { announce, badge, empty, field, pager, section, select, table } from '../ui.js';
import { FACT_TYPES, TAGS_MATCH } from '../vocabulary.js';

/** Options of a tags_match select: the contract's values with the console's labels. */
export const tagsMatchOptions = () => TAGS_MATCH.map((m) => [m, TAGS_MATCH_LABELS[m] ?? m]);

/** Long text folds into a disclosure so a page of 50 stays readable. */
function memoryText(m) {
  const text = m.text ?? '';
  const main =
    text.length > 280
      ? h('details', { class: 'fold' }, h('summary', null, `${text.slice(0, 240)}…`), h('p', null, text))
      : h('p', { class: 'memory-text' }, text);
  return [main, m.context ? h('p', { class: 'muted small' }, 'Context: ', m.context) : null];
}

export async function memoriesTab(body, profile) {
  const q = h('input', { type: 'search', name: 'q', autocomplete: 'off', maxlength: '500' });
  const type = select([['', 'Any type'], ...FACT_TYPES.map((t) => [t])], { name: 'type' });
  const tags = h('input', { name: 'tags', autocomplete: 'off' });
  const tagsMatch = select(tagsMatchOptions(), { name: 'tags_match' });
  const documentId = h('input', { name: 'document_id', autocomplete: 'off', maxlength: '256' });
  const size = select([['25'], ['50'], ['100'], ['200']], { name: 'limit', value: '50' });

  const list = pager('Memories', {
    load: (cursor) =>
      get(bankUrl(profile.id, '/memories'), {
        q: q.value.trim(),
        type: type.value,
        tags: tags.value.trim(),
        tags_match: tags.value.trim() ? tagsMatch.value : '',
        document_id: documentId.value.trim(),
        limit: size.value,
        cursor,
      }),
    render: (items) =>
      items.length
        ? table(
            'Memories',
            [
              { label: 'Memory', cell: memoryText, class: 'wide-col' },
              { label: 'Type', cell: (m) => badge(m.type, m.type) },
              { label: 'Tags', cell: (m) => (m.tags?.length ? m.tags.map((t) => badge(t)) : '—') },
              { label: 'Entities', cell: (m) => (m.entities?.length ? m.entities.join(', ') : '—') },
              {
                label: 'Document',
                cell: (m) =>
                  m.document_id
                    ? h(
                        'button',
                        {
                          type: 'button',
                          class: 'link',
                          title: 'Show only this document',
                          onclick: () => {
                            documentId.value = m.document_id;
                            list.reload();
                          },
                        },
                        m.document_id,
                      )
                    : '—',
              },
              { label: 'Mentioned', cell: (m) => time(m.mentioned_at) },
              {
                label: 'Occurred',
                cell: (m) =>
                  m.occurred_start
                    ? [
                        time(m.occurred_start),
                        m.occurred_end && m.occurred_end !== m.occurred_start
                          ? [' – ', time(m.occurred_end)]
                          : null,
                      ]
                    : '—',
              },
              {
                label: 'Actions',
                cell: (m) =>
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger small',
                      'aria-label': `Delete memory: ${(m.text ?? '').slice(0, 60)}`,
                      onclick: async () => {
                        if (!confirm(`Delete this memory?\n\n${(m.text ?? '').slice(0, 200)}`)) return;
                        try {
                          await del(bankUrl(profile.id, `/memories/${encodeURIComponent(m.id)}`));
                          announce('Memory deleted.', 'success');
                          await list.refresh();
                        } catch (err) {
                          announce(err.message, 'error');
                        }
                      },
                    },
                    'Delete',
                  ),
              },
            ],
            items,
          )
        : empty('No memories match.'),
  });

  const filters = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter memories',
      onsubmit: (e) => {
        e.preventDefault();
        list.reload();
      },
      onreset: () => queueMicrotask(() => list.reload()),
    },
    field('Text contains', q),
    field('Type', type),
    field('Tags', tags, { hint: 'Comma-separated.' }),
    field('Tags match', tagsMatch),
    field('Document id', documentId),
    field('Per page', size),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Apply'),
      h('button', { type: 'reset', class: 'secondary' }, 'Clear'),
    ),
  );
  body.append(
    section('Filter', filters),
    section(`Memories (${profile.memory_count.toLocaleString()} in the bank, newest first)`, list.element),
  );
  await list.reload();
}
