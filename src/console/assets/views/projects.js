/** Projects and their API keys (operator token only). */
import { del, get, post } from '../api.js';
import { fill, fmtNumber, h, localToIso, time } from '../dom.js';
import { SCOPE_LABELS } from '../labels.js';
import {
  announce,
  badge,
  check,
  clearFormError,
  copyText,
  empty,
  errorBox,
  field,
  loading,
  pageHeader,
  section,
  showFormError,
  table,
} from '../ui.js';
import { SCOPES } from '../vocabulary.js';

/** The contract's scopes, each with what it lets a key do. */
const SCOPE_CHOICES = SCOPES.map((s) => [s, SCOPE_LABELS[s] ?? '']);

const projectUrl = (id, rest = '') => `/v1/default/projects/${encodeURIComponent(id)}${rest}`;

const limitsText = (limits) => {
  const set = Object.entries(limits ?? {}).filter(([, v]) => v !== null && v !== undefined);
  return set.length
    ? set.map(([k, v]) => `${k.replaceAll('_', ' ')}: ${fmtNumber(v)}`).join(', ')
    : 'server defaults';
};

/** `#/projects`: list and create projects. */
export async function projectsPage(view) {
  const list = h('div', null, loading('Loading projects'));
  const id = h('input', {
    name: 'id',
    required: true,
    maxlength: '64',
    pattern: '[A-Za-z0-9][A-Za-z0-9._\\-]*',
  });
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
          const p = await post('/v1/default/projects', { id: id.value.trim(), name: name.value.trim() });
          announce(`Project ${p.id} created.`, 'success');
          location.hash = `#/projects/${encodeURIComponent(p.id)}`;
        } catch (err) {
          showFormError(form, slot, err, (path) => ({ id, name })[path] ?? null);
        }
      },
    },
    field('Project id', id, { hint: 'Letters, digits, . _ - (a slug).' }),
    field('Name', name),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create project')),
  );
  view.append(
    pageHeader('Projects', {
      lead: 'Tenants of this server. Each project has its own banks, spaces, keys and audit log.',
    }),
    section('All projects', list),
    section('Create a project', form, slot),
  );
  try {
    const { items } = await get('/v1/default/projects');
    list.replaceChildren(
      items.length
        ? table(
            'Projects',
            [
              { label: 'Id', cell: (p) => h('a', { href: `#/projects/${encodeURIComponent(p.id)}` }, p.id) },
              { label: 'Name', cell: (p) => p.name },
              { label: 'Limits', cell: (p) => limitsText(p.limits) },
              { label: 'Created', cell: (p) => time(p.created_at) },
            ],
            items,
          )
        : empty('No projects yet.'),
    );
  } catch (err) {
    list.replaceChildren(errorBox(err));
  }
}

function keyStatus(k) {
  if (k.revoked_at) return badge('revoked', 'muted');
  if (k.expires_at && new Date(k.expires_at) <= new Date()) return badge('expired', 'warn');
  return badge('active', 'ok');
}

/** The secret of a new key, shown once with a copy button. */
function secretPanel(key, onDone) {
  const input = h('input', { readonly: true, value: key.key, class: 'mono', 'aria-label': 'New API key' });
  const copied = h('span', { class: 'muted', 'aria-live': 'polite' });
  const panel = h(
    'div',
    { class: 'secret', role: 'region', 'aria-label': 'New API key' },
    h('h3', null, `Key “${key.name}” created`),
    h('p', null, 'Copy it now: the secret is shown only this once and cannot be recovered.'),
    h(
      'div',
      { class: 'secret-row' },
      input,
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            copied.textContent = (await copyText(key.key, input)) ? 'Copied.' : 'Select the key and copy it.';
          },
        },
        'Copy',
      ),
      h('button', { type: 'button', class: 'secondary', onclick: onDone }, 'Done'),
    ),
    copied,
    h(
      'p',
      { class: 'muted small' },
      'Use it as ',
      h('code', null, 'Authorization: Bearer <key>'),
      ' on /v1/me.',
    ),
  );
  queueMicrotask(() => {
    input.focus();
    input.select();
  });
  return panel;
}

/** `#/projects/:project`: a project's keys; mint and revoke. */
export async function projectPage(view, { project }) {
  const info = h('div', null, loading());
  const keys = h('div', null, loading('Loading keys'));
  const secretSlot = h('div');
  view.append(
    pageHeader(project, { crumbs: [['Projects', '#/projects'], [project]] }),
    section('Project', info),
    section('API keys', secretSlot, keys),
    section('Mint a key', mintForm()),
  );

  async function loadKeys() {
    try {
      const { items } = await get(projectUrl(project, '/keys'));
      keys.replaceChildren(
        items.length
          ? table(
              'API keys',
              [
                { label: 'Name', cell: (k) => k.name },
                { label: 'Key id', cell: (k) => h('code', null, k.id) },
                { label: 'Scopes', cell: (k) => k.scopes.map((s) => badge(s)) },
                { label: 'Banks', cell: (k) => (k.banks ? k.banks.map((b) => h('code', null, b)) : 'all') },
                { label: 'Status', cell: keyStatus },
                { label: 'Created', cell: (k) => time(k.created_at) },
                { label: 'Expires', cell: (k) => (k.expires_at ? time(k.expires_at) : 'never') },
                {
                  label: 'Actions',
                  cell: (k) =>
                    k.revoked_at
                      ? time(k.revoked_at)
                      : h(
                          'button',
                          {
                            type: 'button',
                            class: 'danger small',
                            'aria-label': `Revoke key ${k.name} (${k.id})`,
                            onclick: () => revoke(k),
                          },
                          'Revoke',
                        ),
                },
              ],
              items,
            )
          : empty('No keys yet.'),
      );
    } catch (err) {
      keys.replaceChildren(errorBox(err));
    }
  }

  async function revoke(k) {
    if (!confirm(`Revoke key "${k.name}" (${k.id})? Clients using it get 401 at once.`)) return;
    try {
      await del(projectUrl(project, `/keys/${encodeURIComponent(k.id)}`));
      announce(`Key ${k.name} revoked.`, 'success');
      await loadKeys();
    } catch (err) {
      announce(err.message, 'error');
    }
  }

  function mintForm() {
    const name = h('input', { name: 'name', required: true, maxlength: '256' });
    const boxes = SCOPE_CHOICES.map(([scope]) =>
      h('input', {
        type: 'checkbox',
        name: 'scopes',
        value: scope,
        checked: scope === 'retain' || scope === 'recall',
      }),
    );
    const expires = h('input', { type: 'datetime-local', name: 'expires_at' });
    const banks = h('input', { name: 'banks', placeholder: 'alice, user-42/*' });
    const slot = h('div');
    const scopesSet = h(
      'fieldset',
      { class: 'scopes' },
      h('legend', null, 'Scopes'),
      boxes.map((box, i) =>
        check(
          h(
            'span',
            null,
            h('code', null, SCOPE_CHOICES[i][0]),
            h('span', { class: 'muted' }, ` — ${SCOPE_CHOICES[i][1]}`),
          ),
          box,
        ),
      ),
    );
    const form = h(
      'form',
      {
        novalidate: true,
        onsubmit: async (e) => {
          e.preventDefault();
          clearFormError(form, slot);
          // Comma-separated bank ids or prefixes ending in '*'; empty = every bank.
          const bankList = banks.value
            .split(',')
            .map((b) => b.trim())
            .filter(Boolean);
          const body = {
            name: name.value.trim(),
            scopes: boxes.filter((b) => b.checked).map((b) => b.value),
            ...(bankList.length ? { banks: bankList } : {}),
            ...(expires.value ? { expires_at: localToIso(expires.value) } : {}),
          };
          try {
            const key = await post(projectUrl(project, '/keys'), body);
            form.reset();
            for (const b of boxes) b.checked = b.value === 'retain' || b.value === 'recall';
            secretSlot.replaceChildren(secretPanel(key, () => secretSlot.replaceChildren()));
            await loadKeys();
          } catch (err) {
            showFormError(
              form,
              slot,
              err,
              (path) => (path.startsWith('banks') ? banks : { name, expires_at: expires }[path]) ?? null,
            );
          }
        },
      },
      h(
        'div',
        { class: 'grid' },
        field('Name', name, { hint: 'Who uses it, e.g. "support-bot".' }),
        field('Expires (optional)', expires, { hint: 'Your local time. Empty: never.' }),
        field('Banks (optional)', banks, {
          hint: 'Comma-separated bank ids or prefixes ending in * (user-42/*). Empty: every bank.',
        }),
      ),
      scopesSet,
      slot,
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Mint key')),
    );
    return form;
  }

  async function loadInfo() {
    try {
      const p = await get(projectUrl(project));
      const usage = Object.entries(p.usage ?? {}).flatMap(([k, v]) => [
        h('dt', null, k.replaceAll('_', ' ')),
        h('dd', null, fmtNumber(v)),
      ]);
      fill(
        info,
        h(
          'dl',
          { class: 'facts' },
          h('dt', null, 'Name'),
          h('dd', null, p.name),
          h('dt', null, 'Created'),
          h('dd', null, time(p.created_at)),
          h('dt', null, 'Limits'),
          h('dd', null, limitsText(p.limits)),
          usage,
        ),
        p.id === 'default'
          ? h('p', { class: 'muted small' }, 'The built-in project behind /v1/default.')
          : null,
      );
    } catch (err) {
      info.replaceChildren(errorBox(err));
    }
  }

  await Promise.all([loadInfo(), loadKeys()]);
}
