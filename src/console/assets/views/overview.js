/** Bank overview: profile and counts, disposition, config editor, directives, deletion. */
import { bankUrl, del, get, isMissingRoute, openApi, patch, post } from '../api.js';
import { fill, fmtNumber, h, splitList, time, uid } from '../dom.js';
import { CONFIG_HINTS, DISPOSITION_LABELS } from '../labels.js';
import {
  announce,
  badge,
  check,
  clearFormError,
  empty,
  errorBox,
  field,
  loading,
  section,
  showFormError,
  table,
} from '../ui.js';
import { DISPOSITION_TRAITS } from '../vocabulary.js';

/** `[trait, name, low end, high end]` for each of the contract's disposition traits. */
const DISPOSITION = DISPOSITION_TRAITS.map((t) => [t, ...(DISPOSITION_LABELS[t] ?? [t, '', ''])]);

function profileSection(profile) {
  const stat = (label, value) =>
    h(
      'div',
      { class: 'stat' },
      h('span', { class: 'stat-value' }, fmtNumber(value)),
      h('span', { class: 'stat-label' }, label),
    );
  return section(
    'Profile',
    h(
      'div',
      { class: 'stats' },
      stat('memories', profile.memory_count),
      stat('entities', profile.entity_count),
      stat('documents', profile.document_count),
    ),
    h(
      'dl',
      { class: 'facts' },
      [
        ['Name', profile.name ?? '—'],
        ['Mission', profile.mission ?? '—'],
        ['Space', profile.space_id ?? '—'],
        ['Org bank', profile.is_org_bank ? 'yes' : 'no'],
        ['Created', time(profile.created_at)],
        ['Updated', time(profile.updated_at)],
      ].flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
    ),
  );
}

/** Three 1–5 sliders saved together as the disposition_* config keys. */
function dispositionSection(profile, reload) {
  const slot = h('div');
  const sliders = DISPOSITION.map(([key, label, low, high]) => {
    const input = h('input', {
      type: 'range',
      min: '1',
      max: '5',
      step: '1',
      name: key,
      value: String(profile.disposition[key]),
    });
    input.id = uid('d');
    const out = h('output', { for: input.id, class: 'slider-value' }, String(profile.disposition[key]));
    input.addEventListener('input', () => {
      out.textContent = input.value;
      input.setAttribute('aria-valuetext', `${input.value} of 5`);
    });
    input.setAttribute('aria-valuetext', `${input.value} of 5`);
    const err = h('p', { class: 'field-error', id: `${input.id}-err`, hidden: true });
    input.setAttribute('aria-describedby', err.id);
    return {
      key,
      input,
      el: h(
        'div',
        { class: 'slider' },
        h('label', { for: input.id }, label),
        h(
          'div',
          { class: 'slider-row' },
          h('span', { class: 'muted small' }, low),
          input,
          h('span', { class: 'muted small' }, high),
          out,
        ),
        err,
      ),
    };
  });
  const form = h(
    'form',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        clearFormError(form, slot);
        const updates = Object.fromEntries(
          sliders.map((s) => [`disposition_${s.key}`, Number(s.input.value)]),
        );
        try {
          await patch(bankUrl(profile.id, '/config'), { updates });
          announce('Disposition saved.', 'success');
          await reload();
        } catch (err) {
          showFormError(
            form,
            slot,
            err,
            (path) => sliders.find((s) => path === `updates.disposition_${s.key}`)?.input,
          );
        }
      },
    },
    h('p', { class: 'muted' }, 'How Reflect answers: each trait from 1 to 5.'),
    sliders.map((s) => s.el),
    slot,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save disposition')),
  );
  return section('Disposition', form);
}

/** The config field's kind, from the server's OpenAPI schema (else from the value). */
function kindOf(doc, schema, value) {
  let s = schema;
  const ref = s?.$ref;
  if (ref?.startsWith('#/components/schemas/')) s = doc?.components?.schemas?.[ref.split('/').pop()];
  const variants = s?.anyOf ?? s?.oneOf;
  if (variants) s = variants.find((v) => v.type !== 'null') ?? s;
  const types = [s?.type].flat();
  const nullable = types.includes('null') || !!variants || value === null;
  if (Array.isArray(s?.enum)) return { kind: 'enum', options: s.enum, nullable };
  if (types.includes('boolean') || typeof value === 'boolean') return { kind: 'boolean' };
  if (types.includes('integer') || types.includes('number') || typeof value === 'number')
    return { kind: 'number', nullable };
  return { kind: 'text', nullable };
}

function control(name, kind, value) {
  if (kind.kind === 'enum') {
    return h(
      'select',
      { name, value: value ?? '' },
      kind.nullable ? h('option', { value: '' }, '(none)') : null,
      kind.options.map((o) => h('option', { value: o }, o)),
    );
  }
  if (kind.kind === 'boolean') return h('input', { type: 'checkbox', name, checked: !!value });
  if (kind.kind === 'number')
    return h('input', {
      type: 'text',
      inputmode: 'numeric',
      name,
      value: String(value ?? ''),
      class: 'short',
    });
  return h('textarea', { name, rows: '3' }, value ?? '');
}

function readControl(kind, el) {
  if (kind.kind === 'boolean') return el.checked;
  if (kind.kind === 'number') {
    const text = el.value.trim();
    if (text === '' && kind.nullable) return null;
    // Not a number: sent as typed, so the server's message explains what it wants.
    return text !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
  }
  if (kind.nullable && el.value === '') return null;
  return el.value;
}

/** Every config key with its effective value; saving sends only changed keys. */
async function configSection(profile, reload) {
  const box = section('Config', loading('Loading config'));
  const [view, doc] = await Promise.all([get(bankUrl(profile.id, '/config')).catch((e) => e), openApi()]);
  if (view instanceof Error) {
    box.replaceChildren(h('h2', null, 'Config'), errorBox(view));
    return box;
  }
  const props = doc?.components?.schemas?.BankConfigValues?.properties ?? {};
  const slot = h('div');
  const rows = Object.entries(view.config).map(([key, value]) => {
    const kind = kindOf(doc, props[key], value);
    const el = control(key, kind, value);
    el.id = uid('cfg');
    const overridden = Object.hasOwn(view.overrides ?? {}, key);
    const reset = overridden
      ? h(
          'button',
          {
            type: 'button',
            class: 'ghost small',
            'aria-label': `Reset ${key} to its default`,
            onclick: () => save({ [key]: null }),
          },
          'Reset',
        )
      : null;
    const label = h(
      'span',
      null,
      h('code', null, key),
      overridden ? [' ', badge('set on this bank', 'info')] : null,
    );
    const wrap =
      kind.kind === 'boolean'
        ? h(
            'div',
            { class: 'field' },
            check(label, el),
            h('p', { class: 'hint', id: `${el.id}-hint` }, CONFIG_HINTS[key] ?? ''),
            h('p', { class: 'field-error', id: `${el.id}-err`, hidden: true }),
          )
        : field(label, el, { hint: CONFIG_HINTS[key] });
    if (kind.kind === 'boolean') el.setAttribute('aria-describedby', `${el.id}-hint ${el.id}-err`);
    if (reset) wrap.append(reset);
    return { key, kind, el, value, wrap };
  });

  const form = h(
    'form',
    {
      class: 'config-form',
      novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        const updates = {};
        for (const r of rows) {
          const next = readControl(r.kind, r.el);
          if (JSON.stringify(next) !== JSON.stringify(r.value)) updates[r.key] = next;
        }
        if (Object.keys(updates).length === 0) {
          announce('Nothing changed.');
          return;
        }
        return save(updates);
      },
    },
    h(
      'div',
      { class: 'config-grid' },
      rows.map((r) => r.wrap),
    ),
    slot,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save config')),
  );

  async function save(updates) {
    clearFormError(form, slot);
    try {
      await patch(bankUrl(profile.id, '/config'), { updates });
      announce(`Config saved: ${Object.keys(updates).join(', ')}.`, 'success');
      await reload();
    } catch (err) {
      showFormError(form, slot, err, (path) => rows.find((r) => path === `updates.${r.key}`)?.el);
    }
  }

  box.replaceChildren(
    h('h2', null, 'Config'),
    h(
      'p',
      { class: 'muted' },
      'Effective values; keys set on this bank override the server defaults. The server checks every value.',
    ),
    form,
  );
  return box;
}

const itemsOf = (r) => (Array.isArray(r) ? r : (r?.items ?? []));

/** Directives (hard rules for Reflect); hidden when the server has no directives endpoint. */
async function directivesSection(profile) {
  const url = (rest = '') => bankUrl(profile.id, `/directives${rest}`);
  let first;
  try {
    first = await get(url());
  } catch (err) {
    if (isMissingRoute(err)) return null;
    return section('Directives', errorBox(err));
  }
  const list = h('div');
  const render = (items) => {
    list.replaceChildren(
      items.length
        ? table(
            'Directives',
            [
              { label: 'Directive', cell: (d) => [d.name ? h('strong', null, d.name, ': ') : null, d.text] },
              { label: 'Priority', cell: (d) => String(d.priority ?? '—'), class: 'num' },
              { label: 'Tags', cell: (d) => (d.tags?.length ? d.tags.map((t) => badge(t)) : '—') },
              {
                label: 'Active',
                cell: (d) => {
                  const box = h('input', {
                    type: 'checkbox',
                    checked: d.active !== false,
                    'aria-label': `Directive ${d.name ?? d.id} active`,
                    onchange: async () => {
                      try {
                        await patch(url(`/${encodeURIComponent(d.id)}`), { active: box.checked });
                        announce(`Directive ${box.checked ? 'activated' : 'deactivated'}.`, 'success');
                      } catch (err) {
                        box.checked = !box.checked;
                        announce(err.message, 'error');
                      }
                    },
                  });
                  return box;
                },
              },
              {
                label: 'Actions',
                cell: (d) =>
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger small',
                      'aria-label': `Delete directive ${d.name ?? d.id}`,
                      onclick: async () => {
                        if (!confirm('Delete this directive?')) return;
                        try {
                          await del(url(`/${encodeURIComponent(d.id)}`));
                          await reloadList();
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
        : empty('No directives.'),
    );
  };
  const reloadList = async () => {
    try {
      render(itemsOf(await get(url())));
    } catch (err) {
      list.replaceChildren(errorBox(err));
    }
  };
  render(itemsOf(first));

  const name = h('input', { name: 'name', maxlength: '256' });
  const text = h('textarea', { name: 'text', rows: '2', required: true });
  const priority = h('input', {
    name: 'priority',
    type: 'text',
    inputmode: 'numeric',
    value: '0',
    class: 'short',
  });
  const tags = h('input', { name: 'tags', autocomplete: 'off' });
  const active = h('input', { type: 'checkbox', name: 'active', checked: true });
  const slot = h('div');
  const fields = { name, text, priority, tags, active };
  const form = h(
    'form',
    {
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFormError(form, slot);
        const p = priority.value.trim();
        const body = {
          text: text.value.trim(),
          priority: p !== '' && Number.isFinite(Number(p)) ? Number(p) : p,
          tags: splitList(tags.value),
          active: active.checked,
          ...(name.value.trim() ? { name: name.value.trim() } : {}),
        };
        try {
          await post(url(), body);
          announce('Directive added.', 'success');
          form.reset();
          await reloadList();
        } catch (err) {
          showFormError(form, slot, err, (path) => fields[path.split('.')[0]] ?? null);
        }
      },
    },
    h(
      'div',
      { class: 'grid' },
      field('Name (optional)', name),
      field('Priority', priority, { hint: 'Higher first.' }),
      field('Tags', tags, { hint: 'Comma-separated; untagged directives always apply.' }),
    ),
    field('Rule', text, { wide: true }),
    check('Active', active),
    slot,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Add directive')),
  );
  return section(
    'Directives',
    h('p', { class: 'muted' }, 'Hard rules that shape Reflect.'),
    list,
    h('h3', null, 'Add a directive'),
    form,
  );
}

function dangerSection(profile) {
  return h(
    'section',
    { class: 'card danger-zone', 'aria-label': 'Delete bank' },
    h('h2', null, 'Delete bank'),
    h('p', null, 'Deletes the bank and all its memories. Its audit trail stays.'),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          if (
            !confirm(
              `Delete bank ${profile.id} and its ${profile.memory_count} memories? This cannot be undone.`,
            )
          )
            return;
          try {
            const r = await del(bankUrl(profile.id));
            announce(`Bank ${profile.id} deleted (${r.memories_deleted} memories).`, 'success');
            location.hash = '#/banks';
          } catch (err) {
            announce(err.message, 'error');
          }
        },
      },
      'Delete this bank',
    ),
  );
}

export async function overviewTab(body, initial) {
  let profile = initial;
  const reload = async () => {
    try {
      profile = await get(bankUrl(profile.id));
    } catch {
      // keep the last profile; the next action reports the error
    }
    // A redraw replaces the controls: keep keyboard users where they were.
    const before = document.activeElement;
    const label = before?.getAttribute('aria-label');
    const name = before?.getAttribute('name');
    const text = before?.tagName === 'BUTTON' ? before.textContent : null;
    await draw();
    const again = [...body.querySelectorAll('button, input, select, textarea')].find(
      (el) =>
        (label && el.getAttribute('aria-label') === label) ||
        (name && el.getAttribute('name') === name) ||
        (text && el.tagName === 'BUTTON' && el.textContent === text),
    );
    (again ?? body.closest('.view')?.querySelector('h1'))?.focus();
  };
  const draw = async () => {
    const [config, directives] = await Promise.all([
      configSection(profile, reload),
      directivesSection(profile),
    ]);
    fill(
      body,
      h('div', { class: 'columns' }, profileSection(profile), dispositionSection(profile, reload)),
      config,
      directives,
      dangerSection(profile),
    );
  };
  await draw();
}
