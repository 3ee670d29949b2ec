/** Spaces (organisations), the banks attached to them and their org banks. */
import { del, get, onSurface, post, put } from '../api.js';
import { fmtNumber, h, time } from '../dom.js';
import {
  announce,
  badge,
  clearFormError,
  empty,
  errorBox,
  field,
  loading,
  pageHeader,
  pager,
  section,
  showFormError,
  table,
} from '../ui.js';

const spaceUrl = (space, rest = '') => onSurface(`/spaces/${encodeURIComponent(space)}${rest}`);
export const bankHref = (bank, tab = '') => `#/banks/${encodeURIComponent(bank)}${tab ? `/${tab}` : ''}`;
export const orgBankOf = (space) => `__org__:${space}`;

/** One space: its banks (paged), attach and remove, its org bank, deletion. */
function spaceCard(space, reloadAll) {
  const banks = pager(`Banks of ${space.id}`, {
    load: (cursor) => get(onSurface('/banks'), { space: space.id, limit: 10, cursor }),
    render: (items) =>
      items.length
        ? table(
            `Banks of space ${space.id}`,
            [
              {
                label: 'Bank',
                cell: (b) => [
                  h('a', { href: bankHref(b.id) }, b.id),
                  b.is_org_bank ? badge('org bank', 'info') : null,
                ],
              },
              { label: 'Memories', cell: (b) => fmtNumber(b.memory_count), class: 'num' },
              {
                label: 'Actions',
                cell: (b) =>
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary small',
                      'aria-label': `Remove ${b.id} from ${space.id}`,
                      onclick: async () => {
                        try {
                          await del(spaceUrl(space.id, `/banks/${encodeURIComponent(b.id)}`));
                          announce(`${b.id} removed from ${space.id}; its memories are kept.`, 'success');
                          await reloadAll();
                        } catch (err) {
                          announce(err.message, 'error');
                        }
                      },
                    },
                    'Remove',
                  ),
              },
            ],
            items,
          )
        : empty('No banks in this space yet.'),
  });
  const bankInput = h('input', { name: 'bank', required: true, maxlength: '256', autocomplete: 'off' });
  const slot = h('div');
  const attach = h(
    'form',
    {
      class: 'inline-form',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFormError(attach, slot);
        try {
          const bank = bankInput.value.trim();
          await put(spaceUrl(space.id, `/banks/${encodeURIComponent(bank)}`));
          announce(`${bank} attached to ${space.id}.`, 'success');
          await reloadAll();
        } catch (err) {
          showFormError(attach, slot, err, () => bankInput);
        }
      },
    },
    field('Attach a bank', bankInput, { hint: 'A bank id; a new bank is created.' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Attach')),
  );
  const org = orgBankOf(space.id);
  const card = h(
    'section',
    { class: 'card', 'aria-label': `Space ${space.id}` },
    h(
      'div',
      { class: 'card-title' },
      h('h2', null, space.name, ' ', h('code', { class: 'muted' }, space.id)),
      h(
        'button',
        {
          type: 'button',
          class: 'danger small',
          'aria-label': `Delete space ${space.id}`,
          onclick: async () => {
            if (!confirm(`Delete space ${space.id}? Its banks are kept and become unassigned.`)) return;
            try {
              const r = await del(spaceUrl(space.id));
              announce(`Space ${space.id} deleted; ${r.banks_unassigned} banks unassigned.`, 'success');
              await reloadAll();
            } catch (err) {
              announce(err.message, 'error');
            }
          },
        },
        'Delete space',
      ),
    ),
    h(
      'p',
      { class: 'muted' },
      `${fmtNumber(space.bank_count)} bank${space.bank_count === 1 ? '' : 's'} · created `,
      time(space.created_at),
      ' · org bank ',
      h('a', { href: bankHref(org) }, h('code', null, org)),
    ),
    banks.element,
    attach,
    slot,
  );
  banks.reload();
  return card;
}

/** `#/spaces`: every space with its banks; create a space. */
export async function spacesPage(view) {
  const list = h('div', null, loading('Loading spaces'));
  const id = h('input', { name: 'id', required: true, maxlength: '256' });
  const name = h('input', { name: 'name', required: true, maxlength: '256' });
  const slot = h('div');
  const form = h(
    'form',
    {
      class: 'inline-form',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFormError(form, slot);
        try {
          const sp = await post(onSurface('/spaces'), { id: id.value.trim(), name: name.value.trim() });
          announce(`Space ${sp.id} created.`, 'success');
          form.reset();
          await load();
        } catch (err) {
          showFormError(form, slot, err, (path) => ({ id, name })[path] ?? null);
        }
      },
    },
    field('Space id', id, { hint: 'A slug, e.g. "acme".' }),
    field('Name', name),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create space')),
  );

  async function load() {
    try {
      const { items } = await get(onSurface('/spaces'));
      list.replaceChildren(
        ...(items.length ? items.map((sp) => spaceCard(sp, load)) : [empty('No spaces yet.')]),
      );
    } catch (err) {
      list.replaceChildren(errorBox(err));
    }
  }

  view.append(
    pageHeader('Spaces', {
      lead: 'A space is an organisation. Its org bank (__org__:<space>) holds shared knowledge that Recall can blend under a person’s memories.',
    }),
    section('Create a space', form, slot),
    list,
  );
  await load();
}
