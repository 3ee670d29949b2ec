/** `#/banks`: the project's banks, paged on the server, filterable by space. */
import { get, onSurface } from '../api.js';
import { fmtNumber, h, time } from '../dom.js';
import { badge, empty, field, pageHeader, pager, section, select, table } from '../ui.js';
import { bankHref } from './spaces.js';

export async function banksPage(view, _params, query) {
  const space = h('select', { name: 'space' }, h('option', { value: '' }, 'All banks'));
  const size = select([['25'], ['50'], ['100']], { name: 'limit', value: '50' });
  const filters = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter banks',
      onsubmit: (e) => {
        e.preventDefault();
        list.reload();
      },
    },
    field('Space', space),
    field('Per page', size),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply')),
  );
  const goInput = h('input', { name: 'bank', required: true, autocomplete: 'off', maxlength: '256' });
  const go = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: (e) => {
        e.preventDefault();
        if (goInput.value.trim()) location.hash = bankHref(goInput.value.trim());
      },
    },
    field('Open a bank by id', goInput),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Open')),
  );

  const list = pager('Banks', {
    load: (cursor) => get(onSurface('/banks'), { space: space.value, limit: size.value, cursor }),
    render: (items) =>
      items.length
        ? table(
            'Banks',
            [
              {
                label: 'Bank',
                cell: (b) => [
                  h('a', { href: bankHref(b.id) }, b.id),
                  b.name ? h('span', { class: 'muted' }, ` ${b.name}`) : null,
                ],
              },
              {
                label: 'Space',
                cell: (b) => [b.space_id ?? '—', b.is_org_bank ? [' ', badge('org bank', 'info')] : null],
              },
              { label: 'Memories', cell: (b) => fmtNumber(b.memory_count), class: 'num' },
              { label: 'Entities', cell: (b) => fmtNumber(b.entity_count), class: 'num' },
              { label: 'Documents', cell: (b) => fmtNumber(b.document_count), class: 'num' },
              { label: 'Updated', cell: (b) => time(b.updated_at) },
            ],
            items,
          )
        : empty('No banks here. Banks are created by their first Retain.'),
  });

  view.append(
    pageHeader('Banks', { lead: 'Each bank holds the memories of one person, agent or organisation.' }),
    section('Filter', filters, go),
    section('Banks', list.element),
  );
  // Spaces fill the filter; a key without admin cannot list them and filters by typing instead.
  try {
    const { items } = await get(onSurface('/spaces'));
    for (const sp of items) space.append(h('option', { value: sp.id }, `${sp.name} (${sp.id})`));
  } catch {
    space.disabled = true;
  }
  const wanted = query.get('space');
  if (wanted && [...space.options].some((o) => o.value === wanted)) space.value = wanted;
  await list.reload();
}
