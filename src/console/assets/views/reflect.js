/** Reflect playground: the written answer, its mode, and what it was based on. */
import { bankUrl, post } from '../api.js';
import { fill, h, splitList, time } from '../dom.js';
import { badge, check, clearFormError, empty, field, section, select, showFormError } from '../ui.js';
import { BUDGETS, FACT_TYPES } from '../vocabulary.js';
import { tagsMatchOptions } from './memories.js';

function basedOn(b) {
  const list = (title, items, render) =>
    h(
      'div',
      { class: 'based-on' },
      h('h4', null, `${title} (${items?.length ?? 0})`),
      items?.length
        ? h(
            'ol',
            null,
            items.map((x) => h('li', null, render(x))),
          )
        : empty('None.'),
    );
  return h(
    'div',
    { class: 'based-on-grid' },
    list('Memories', b?.memories, (m) => [
      m.type ? [badge(m.type, m.type), ' '] : null,
      m.text,
      m.mentioned_at ? h('span', { class: 'muted small' }, ' · ', time(m.mentioned_at)) : null,
    ]),
    list('Observations', b?.observations, (o) => o.text),
    list('Directives', b?.directives, (d) => d.text),
  );
}

export async function reflectTab(body, profile) {
  const query = h('textarea', { name: 'query', rows: '2', required: true, maxlength: '20000' });
  const context = h('textarea', { name: 'context', rows: '2', maxlength: '20000' });
  const budget = select([['', 'bank default'], ...BUDGETS.map((b) => [b])], { name: 'budget' });
  const tags = h('input', { name: 'tags', autocomplete: 'off' });
  const tagsMatch = select(tagsMatchOptions(), { name: 'tags_match' });
  const typeBoxes = FACT_TYPES.map((t) => h('input', { type: 'checkbox', name: 'fact_types', value: t }));
  const slot = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const controls = { query, context, budget, tags, tags_match: tagsMatch };
  const run = h('button', { type: 'submit' }, 'Reflect');
  const form = h(
    'form',
    {
      class: 'playground',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFormError(form, slot);
        const b = { query: query.value };
        if (context.value.trim()) b.context = context.value;
        if (budget.value) b.budget = budget.value;
        const tagList = splitList(tags.value);
        if (tagList.length) {
          b.tags = tagList;
          b.tags_match = tagsMatch.value;
        }
        const types = typeBoxes.filter((x) => x.checked).map((x) => x.value);
        if (types.length) b.fact_types = types;
        run.disabled = true;
        out.replaceChildren(h('p', { class: 'loading', role: 'status' }, 'Reflecting…'));
        try {
          const r = await post(bankUrl(profile.id, '/reflect'), b);
          fill(
            out,
            h(
              'div',
              { class: 'answer-head' },
              badge(`mode: ${r.mode}`, r.mode === 'llm' ? 'ok' : 'info'),
              r.usage?.tokens_used !== undefined
                ? h('span', { class: 'muted small' }, `${r.usage.tokens_used} tokens`)
                : null,
            ),
            h('blockquote', { class: 'answer' }, r.response ?? r.text ?? ''),
            r.structured_output !== undefined
              ? h('pre', { class: 'request-json' }, JSON.stringify(r.structured_output, null, 2))
              : null,
            h('h3', null, 'Based on'),
            basedOn(r.based_on),
          );
        } catch (err) {
          out.replaceChildren();
          showFormError(form, slot, err, (path) => controls[path] ?? null);
        } finally {
          run.disabled = false;
        }
      },
    },
    field('Question', query, { wide: true }),
    field('Context (optional)', context, { wide: true }),
    h(
      'div',
      { class: 'grid' },
      field('Budget', budget),
      field('Tags', tags, { hint: 'Comma-separated.' }),
      field('Tags match', tagsMatch),
    ),
    h(
      'fieldset',
      { class: 'types' },
      h('legend', null, 'Fact types (none: all)'),
      h(
        'div',
        { class: 'options' },
        typeBoxes.map((b) => check(b.value, b)),
      ),
    ),
    slot,
    h('div', { class: 'actions' }, run),
  );
  body.append(
    h(
      'div',
      { class: 'playground-layout' },
      section(
        'Reflect playground',
        h('p', { class: 'muted' }, 'A written answer shaped by the bank’s disposition and directives.'),
        form,
      ),
      section('Answer', out),
    ),
  );
}
