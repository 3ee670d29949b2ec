/** Recall playground: every option of Recall, and each result's stage scores. */
import { bankUrl, post } from '../api.js';
import { fill, fmtScore, h, localToIso, splitList, time, uid } from '../dom.js';
import { badge, check, clearFormError, empty, field, section, select, showFormError } from '../ui.js';
import { BUDGETS, FACT_TYPES, SCORE_STAGES } from '../vocabulary.js';
import { tagsMatchOptions } from './memories.js';

/** Recall's per-stage scores, in the contract's order (final first). */
export const STAGES = SCORE_STAGES;

const yesNo = (v) => (v ? 'yes' : 'no');

/** A score as a meter (0–1) and its number. */
function scoreRow(stage, value) {
  const id = uid('score');
  const v = typeof value === 'number' ? value : 0;
  return h(
    'div',
    { class: ['score', stage === 'final' && 'score-final'] },
    h('span', { class: 'score-label', id }, stage),
    h('meter', { min: '0', max: '1', value: String(Math.max(0, Math.min(1, v))), 'aria-labelledby': id }),
    h('span', { class: 'score-value' }, fmtScore(value)),
  );
}

function usageFacts(usage, count, ms) {
  const known = ['tokens_used', 'max_tokens', 'truncated', 'org_blended'];
  const extra = Object.entries(usage ?? {}).filter(([k]) => !known.includes(k));
  return h(
    'dl',
    { class: 'facts usage' },
    h('dt', null, 'Results'),
    h('dd', null, `${count} in ${ms} ms`),
    h('dt', null, 'Tokens'),
    h('dd', null, `${usage?.tokens_used ?? '—'} of ${usage?.max_tokens ?? '—'}`),
    h('dt', null, 'Cut by the token budget'),
    h('dd', null, usage?.truncated ? badge('yes: later results did not fit', 'warn') : 'no'),
    h('dt', null, 'Org bank blended'),
    h('dd', null, yesNo(usage?.org_blended)),
    extra.flatMap(([k, v]) => [
      h('dt', null, k.replaceAll('_', ' ')),
      h('dd', null, typeof v === 'object' ? JSON.stringify(v) : String(v)),
    ]),
  );
}

function resultCard(r, rank, bankId) {
  const fromOrg = r.bank_id && r.bank_id !== bankId;
  return h(
    'li',
    { class: 'result' },
    h(
      'div',
      { class: 'result-head' },
      h('span', { class: 'rank' }, `#${rank}`),
      badge(r.type, r.type),
      fromOrg ? badge(`from ${r.bank_id}`, 'info') : h('span', { class: 'muted small' }, r.bank_id ?? bankId),
      r.mentioned_at ? h('span', { class: 'muted small' }, 'mentioned ', time(r.mentioned_at)) : null,
    ),
    h('p', { class: 'memory-text' }, r.text),
    r.entities?.length || r.tags?.length
      ? h(
          'p',
          { class: 'muted small' },
          r.entities?.length ? `Entities: ${r.entities.join(', ')}` : '',
          r.entities?.length && r.tags?.length ? ' · ' : '',
          r.tags?.length ? `Tags: ${r.tags.join(', ')}` : '',
        )
      : null,
    h(
      'div',
      { class: 'scores', role: 'group', 'aria-label': `Scores of result ${rank}` },
      STAGES.map((st) => scoreRow(st, r.scores?.[st])),
    ),
  );
}

export async function recallTab(body, profile) {
  const query = h('textarea', { name: 'query', rows: '2', required: true, maxlength: '20000' });
  const budget = select([['', 'bank default'], ...BUDGETS.map((b) => [b])], { name: 'budget' });
  const maxTokens = h('input', {
    name: 'max_tokens',
    inputmode: 'numeric',
    class: 'short',
  });
  const typeBoxes = FACT_TYPES.map((t) => h('input', { type: 'checkbox', name: 'types', value: t }));
  const tags = h('input', { name: 'tags', autocomplete: 'off' });
  const tagsMatch = select(tagsMatchOptions(), { name: 'tags_match' });
  const queryTs = h('input', { type: 'datetime-local', name: 'query_timestamp' });
  const winStart = h('input', { type: 'datetime-local', name: 'temporal_window.start' });
  const winEnd = h('input', { type: 'datetime-local', name: 'temporal_window.end' });
  const includeOrg = h('input', { type: 'checkbox', name: 'include_org' });
  const space = h('input', { name: 'space', value: profile.space_id ?? '', autocomplete: 'off' });
  const mins = Object.fromEntries(
    STAGES.map((st) => [st, h('input', { name: `min_scores.${st}`, inputmode: 'decimal', class: 'short' })]),
  );
  const slot = h('div');
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const sent = h('pre', { class: 'request-json' });

  const controls = {
    query,
    budget,
    max_tokens: maxTokens,
    tags,
    tags_match: tagsMatch,
    query_timestamp: queryTs,
    'temporal_window.start': winStart,
    'temporal_window.end': winEnd,
    temporal_window: winStart,
    include_org: includeOrg,
    space,
    ...Object.fromEntries(STAGES.map((st) => [`min_scores.${st}`, mins[st]])),
  };

  const num = (text) => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text.trim());

  function requestBody() {
    const b = { query: query.value };
    const types = typeBoxes.filter((x) => x.checked).map((x) => x.value);
    if (types.length) b.types = types;
    if (maxTokens.value.trim()) b.max_tokens = num(maxTokens.value);
    if (budget.value) b.budget = budget.value;
    if (includeOrg.checked) b.include_org = true;
    if (space.value.trim() && includeOrg.checked) b.space = space.value.trim();
    const tagList = splitList(tags.value);
    if (tagList.length) {
      b.tags = tagList;
      b.tags_match = tagsMatch.value;
    }
    if (queryTs.value) b.query_timestamp = localToIso(queryTs.value);
    if (winStart.value || winEnd.value)
      b.temporal_window = { start: localToIso(winStart.value) ?? '', end: localToIso(winEnd.value) ?? '' };
    const minScores = Object.fromEntries(
      STAGES.filter((st) => mins[st].value.trim()).map((st) => [st, num(mins[st].value)]),
    );
    if (Object.keys(minScores).length) b.min_scores = minScores;
    return b;
  }

  const run = h('button', { type: 'submit' }, 'Run recall');
  const form = h(
    'form',
    {
      class: 'playground',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearFormError(form, slot);
        const b = requestBody();
        sent.textContent = JSON.stringify(b, null, 2);
        run.disabled = true;
        results.replaceChildren(h('p', { class: 'loading', role: 'status' }, 'Recalling…'));
        const started = performance.now();
        try {
          const r = await post(bankUrl(profile.id, '/memories/recall'), b);
          const ms = Math.round(performance.now() - started);
          fill(
            results,
            usageFacts(r.usage, r.results.length, ms),
            r.results.length
              ? h(
                  'ol',
                  { class: 'result-list' },
                  r.results.map((x, i) => resultCard(x, i + 1, profile.id)),
                )
              : empty('Nothing recalled.'),
          );
          // On a narrow screen the results are below the form: bring them into view.
          if (results.getBoundingClientRect().top > window.innerHeight)
            results.scrollIntoView({ block: 'start' });
        } catch (err) {
          results.replaceChildren();
          showFormError(form, slot, err, (path) => controls[path] ?? null);
        } finally {
          run.disabled = false;
        }
      },
    },
    field('Query', query, { wide: true }),
    h(
      'div',
      { class: 'grid' },
      field('Budget', budget),
      field('Max tokens', maxTokens, { hint: 'Results are cut at the first one that would overflow.' }),
      field('Tags', tags, { hint: 'Comma-separated.' }),
      field('Tags match', tagsMatch),
    ),
    h(
      'fieldset',
      { class: 'types' },
      h('legend', null, 'Types (none: all)'),
      h(
        'div',
        { class: 'options' },
        typeBoxes.map((b) => check(b.value, b)),
      ),
    ),
    h(
      'details',
      { class: 'advanced' },
      h('summary', null, 'Time, org blending and minimum scores'),
      h(
        'div',
        { class: 'grid' },
        field('Query timestamp', queryTs, { hint: 'Recall as of this time (local).' }),
        field('Time window start', winStart),
        field('Time window end', winEnd),
      ),
      h(
        'div',
        { class: 'grid' },
        h('div', { class: 'field' }, check('Blend the org bank (include_org)', includeOrg)),
        field('Space', space, { hint: 'The bank must be in this space.' }),
      ),
      h(
        'fieldset',
        { class: 'min-scores' },
        h('legend', null, 'Minimum scores'),
        h(
          'div',
          { class: 'grid grid-6' },
          STAGES.map((st) => field(st, mins[st])),
        ),
      ),
    ),
    slot,
    h('div', { class: 'actions' }, run),
    h('details', { class: 'sent' }, h('summary', null, 'Request body'), sent),
  );
  body.append(
    h('div', { class: 'playground-layout' }, section('Recall playground', form), section('Results', results)),
  );
}
