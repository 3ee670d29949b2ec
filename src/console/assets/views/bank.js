/** `#/banks/:bank[/:tab]`: one bank, its header and tabs. */
import { bankUrl, get } from '../api.js';
import { fill, h } from '../dom.js';
import { badge, errorBox, loading, pageHeader } from '../ui.js';
import { entitiesTab } from './entities.js';
import { evaluationsTab } from './evaluations.js';
import { graphTab } from './graph.js';
import { memoriesTab } from './memories.js';
import { operationsTab } from './operations.js';
import { overviewTab } from './overview.js';
import { recallTab } from './recall.js';
import { reflectTab } from './reflect.js';
import { bankHref } from './spaces.js';

const TABS = [
  ['', 'Overview', overviewTab],
  ['memories', 'Memories', memoriesTab],
  ['entities', 'Entities', entitiesTab],
  ['graph', 'Graph', graphTab],
  ['recall', 'Recall', recallTab],
  ['reflect', 'Reflect', reflectTab],
  ['evaluations', 'Evaluations', evaluationsTab],
  ['operations', 'Operations', operationsTab],
];

export async function bankPage(view, { bank, tab = '' }) {
  const current = TABS.find(([id]) => id === tab) ?? TABS[0];
  document.title = `${bank} · ${current[1]} · mnemo console`;
  const header = pageHeader(bank, { crumbs: [['Banks', '#/banks'], [bank]] });
  const chips = h('p', { class: 'chips' });
  const tabs = h(
    'nav',
    { class: 'tabs', 'aria-label': 'Bank sections' },
    h(
      'ul',
      null,
      TABS.map(([id, label]) =>
        h(
          'li',
          null,
          h('a', { href: bankHref(bank, id), 'aria-current': id === current[0] ? 'page' : null }, label),
        ),
      ),
      h('li', null, h('a', { href: `#/audit?bank=${encodeURIComponent(bank)}` }, 'Audit')),
    ),
  );
  const body = h('div', { class: 'tab-body' }, loading());
  view.append(header, chips, tabs, body);
  let profile;
  try {
    profile = await get(bankUrl(bank));
  } catch (err) {
    body.replaceChildren(errorBox(err, `Bank ${bank}`));
    return;
  }
  fill(
    chips,
    profile.space_id ? badge(`space ${profile.space_id}`, 'info') : badge('no space', 'muted'),
    profile.is_org_bank ? badge('org bank', 'info') : null,
    profile.name ? badge(profile.name) : null,
  );
  body.replaceChildren();
  await current[2](body, profile);
}
