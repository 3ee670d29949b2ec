/** Entities of a bank, most mentioned first, paged on the server. */
import { bankUrl, get } from '../api.js';
import { fmtNumber, h, time } from '../dom.js';
import { badge, empty, pager, section, table } from '../ui.js';

export async function entitiesTab(body, profile) {
  const list = pager('Entities', {
    load: (cursor) => get(bankUrl(profile.id, '/entities'), { limit: 50, cursor }),
    render: (items) =>
      items.length
        ? table(
            'Entities',
            [
              { label: 'Name', cell: (e) => h('strong', null, e.name) },
              { label: 'Type', cell: (e) => badge(e.type) },
              { label: 'Aliases', cell: (e) => (e.aliases?.length ? e.aliases.join(', ') : '—') },
              { label: 'Mentions', cell: (e) => fmtNumber(e.mention_count), class: 'num' },
              { label: 'First seen', cell: (e) => time(e.first_seen) },
              { label: 'Last seen', cell: (e) => time(e.last_seen) },
            ],
            items,
          )
        : empty('No entities in this bank.'),
  });
  body.append(section(`Entities (${fmtNumber(profile.entity_count)})`, list.element));
  await list.reload();
}
