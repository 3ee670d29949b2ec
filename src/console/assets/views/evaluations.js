/**
 * Recall evaluations of a bank: recall@k and MRR of its runs over time (an inline SVG chart),
 * the runs, one run's cases, rerun and delete. Runs are made with `mnemo eval run`, the SDK or
 * `POST .../evaluations`; a rerun after a config change shows whether Recall got better.
 */
import { bankUrl, del, get, isMissingRoute, post } from '../api.js';
import { fill, fmtDate, fmtNumber, fmtScore, h, s, time } from '../dom.js';
import { announce, badge, empty, errorBox, loading, section, table } from '../ui.js';
import { EVALUATION_CHANNELS } from '../vocabulary.js';

/** The most recent runs charted and listed (one page of the API). */
const RUNS_SHOWN = 100;
const CHANNELS = EVALUATION_CHANNELS;
const SERIES = [
  ['recall_at_k', 'recall@k', 'series-recall'],
  ['mrr', 'MRR', 'series-mrr'],
];

// The chart's drawing box (viewBox units; the SVG scales to its container).
const W = 640;
const H = 220;
const PAD = { left: 40, right: 16, top: 12, bottom: 30 };

/**
 * Recall@k and MRR of the runs (oldest first) as two lines over 0–1. Runs are spaced evenly, in
 * order, whatever the time between them: runs made minutes apart stay apart. Each point names
 * its run in a tooltip; the figures are also in the table below for screen readers.
 */
export function evaluationChart(runs) {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (i) => PAD.left + (runs.length === 1 ? plotW / 2 : (i * plotW) / (runs.length - 1));
  const y = (v) => PAD.top + (1 - Math.max(0, Math.min(1, v))) * plotH;
  const last = runs.at(-1);
  const label =
    `Recall@k and MRR of ${runs.length} evaluation ${runs.length === 1 ? 'run' : 'runs'}` +
    `, ${fmtDate(runs[0].created_at)} to ${fmtDate(last.created_at)}` +
    `; latest recall@${last.k} ${fmtScore(last.recall_at_k)}, MRR ${fmtScore(last.mrr)}`;
  const grid = [0, 0.25, 0.5, 0.75, 1].map((v) =>
    s(
      'g',
      { class: 'grid-line' },
      s('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v) }),
      s('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(2)),
    ),
  );
  const series = SERIES.map(([key, name, cls]) =>
    s(
      'g',
      { class: ['series', cls] },
      runs.length > 1
        ? s('polyline', { points: runs.map((r, i) => `${x(i)},${y(r[key])}`).join(' '), fill: 'none' })
        : null,
      runs.map((r, i) =>
        s(
          'circle',
          { cx: x(i), cy: y(r[key]), r: 3.5 },
          s(
            'title',
            null,
            `${fmtDate(r.created_at)}: ${name} ${fmtScore(r[key])} (k ${r.k}, ${r.case_count} cases)`,
          ),
        ),
      ),
    ),
  );
  const dates = [
    s('text', { x: PAD.left, y: H - 8, 'text-anchor': 'start' }, fmtDate(runs[0].created_at)),
    runs.length > 1
      ? s('text', { x: W - PAD.right, y: H - 8, 'text-anchor': 'end' }, fmtDate(last.created_at))
      : null,
  ];
  const svg = s(
    'svg',
    { class: 'eval-chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label },
    s('title', null, label),
    grid,
    s('g', { class: 'axis-dates' }, dates),
    series,
  );
  const legend = h(
    'p',
    { class: 'chart-legend', 'aria-hidden': 'true' },
    SERIES.map(([, name, cls]) => h('span', { class: ['legend-item', cls] }, name)),
  );
  return h('figure', { class: 'eval-figure' }, svg, legend);
}

/** One run: each channel's figures and each case's outcome. */
function runDetail(run) {
  const channels = table(
    `Figures of run ${run.id}`,
    [
      { label: 'Ranked list', cell: (r) => r.name },
      { label: `Recall@${run.k}`, cell: (r) => fmtScore(r.recall_at_k), class: 'num' },
      { label: 'MRR', cell: (r) => fmtScore(r.mrr), class: 'num' },
    ],
    [
      { name: 'Recall (fused)', recall_at_k: run.recall_at_k, mrr: run.mrr },
      ...CHANNELS.map((c) => ({ name: c, ...run.channels[c] })),
    ],
  );
  const cases = table(
    `Cases of run ${run.id}`,
    [
      { label: 'Query', cell: (c) => c.query },
      {
        label: 'Rank',
        cell: (c) => (c.rank === null ? badge('not found', 'error') : String(c.rank)),
        class: 'num',
      },
      { label: `Recall@${run.k}`, cell: (c) => fmtScore(c.recall_at_k), class: 'num' },
      { label: 'Found by', cell: (c) => (c.found_by.length ? c.found_by.map((f) => badge(f)) : '—') },
      {
        label: 'Expected memories',
        cell: (c) =>
          c.expected.map((e) =>
            h(
              'div',
              null,
              h('code', { title: e.memory_id }, e.memory_id.slice(0, 8)),
              ' ',
              e.rank === null ? 'not in the first k' : `rank ${e.rank}`,
            ),
          ),
      },
    ],
    run.cases,
  );
  return h(
    'div',
    { class: 'run-detail' },
    h(
      'p',
      { class: 'muted' },
      `Run of `,
      time(run.created_at),
      `: ${fmtNumber(run.case_count)} cases, k ${run.k}, budget ${run.budget}, max_tokens ${run.max_tokens}.`,
    ),
    channels,
    h('h3', null, 'Cases'),
    cases,
  );
}

export async function evaluationsTab(body, profile) {
  const url = (rest = '') => bankUrl(profile.id, `/evaluations${rest}`);
  const chartBox = h('div', null, loading('Loading evaluations'));
  const listBox = h('div');
  const detail = section('Run', empty('Choose a run to see its cases.'));
  detail.hidden = true;

  async function show(id) {
    detail.hidden = false;
    detail.replaceChildren(h('h2', null, 'Run'), loading('Loading the run'));
    try {
      const run = await get(url(`/${encodeURIComponent(id)}`));
      detail.replaceChildren(h('h2', null, 'Run'), runDetail(run));
    } catch (err) {
      detail.replaceChildren(h('h2', null, 'Run'), errorBox(err));
    }
  }

  const action = (label, run, cls, fn) =>
    h(
      'button',
      { type: 'button', class: [cls, 'small'], 'aria-label': `${label} run ${run.id}`, onclick: fn },
      label,
    );

  function render(page) {
    const runs = page.items;
    if (runs.length === 0) {
      chartBox.replaceChildren(
        empty(
          'No evaluations yet. Run one with `mnemo eval run --bank … --cases cases.jsonl`, the SDK, or POST …/evaluations.',
        ),
      );
      listBox.replaceChildren();
      return;
    }
    chartBox.replaceChildren(evaluationChart([...runs].reverse()));
    fill(
      listBox,
      page.next_cursor ? h('p', { class: 'muted' }, `The latest ${RUNS_SHOWN} runs.`) : null,
      table(
        'Evaluation runs',
        [
          { label: 'Created', cell: (r) => time(r.created_at) },
          { label: 'k', cell: (r) => String(r.k), class: 'num' },
          { label: 'Cases', cell: (r) => fmtNumber(r.case_count), class: 'num' },
          { label: 'Recall@k', cell: (r) => fmtScore(r.recall_at_k), class: 'num' },
          { label: 'MRR', cell: (r) => fmtScore(r.mrr), class: 'num' },
          { label: 'Budget', cell: (r) => r.budget },
          {
            label: 'Actions',
            cell: (r) => [
              action('Show', r, 'secondary', () => show(r.id)),
              ' ',
              action('Rerun', r, 'secondary', async (e) => {
                const button = e.currentTarget;
                button.disabled = true;
                try {
                  const again = await post(url(), { from: r.id });
                  announce(`Rerun done: recall@${again.k} ${fmtScore(again.recall_at_k)}.`, 'success');
                  await reload();
                } catch (err) {
                  announce(err.message, 'error');
                  button.disabled = false;
                }
              }),
              ' ',
              action('Delete', r, 'danger', async () => {
                if (!confirm('Delete this evaluation run?')) return;
                try {
                  await del(url(`/${encodeURIComponent(r.id)}`));
                  announce('Run deleted.', 'success');
                  await reload();
                } catch (err) {
                  announce(err.message, 'error');
                }
              }),
            ],
          },
        ],
        runs,
      ),
    );
  }

  async function reload() {
    try {
      render(await get(url(), { limit: RUNS_SHOWN }));
    } catch (err) {
      chartBox.replaceChildren(
        isMissingRoute(err) ? errorBox(new Error('This server has no evaluations endpoint.')) : errorBox(err),
      );
      listBox.replaceChildren();
    }
  }

  body.append(
    section(
      'Recall over time',
      h(
        'p',
        { class: 'muted' },
        'Each run asks Recall known questions and scores where the expected memories rank: recall@k is the share found in the first k results, MRR how early the first one comes.',
      ),
      chartBox,
      listBox,
    ),
    detail,
  );
  await reload();
}
