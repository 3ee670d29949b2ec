/**
 * Graph of entities and the memories that link them, built from one page of memories (their
 * `entities`) and the entity list. (The server's `/graph` is Hindsight's memory-to-memory graph,
 * without entity nodes: not this picture.)
 */
import { bankUrl, get } from '../api.js';
import { fill, fmtNumber, h, s } from '../dom.js';
import { forceLayout } from '../graph-layout.js';
import { badge, empty, field, loading, pager, section, select } from '../ui.js';

const W = 880;
const H = 540;

/** The graph of one page of memories: memory —— entity for each entity a memory names. */
function fromMemories(memories, entities) {
  const known = new Map(entities.map((e) => [e.name.toLowerCase(), e]));
  const nodes = new Map();
  const edges = [];
  for (const m of memories) {
    if (!m.entities?.length) continue;
    nodes.set(`m:${m.id}`, { id: `m:${m.id}`, kind: 'memory', label: m.text, weight: 1, data: m });
    for (const name of m.entities) {
      const key = name.toLowerCase();
      const id = `e:${key}`;
      if (!nodes.has(id)) {
        const e = known.get(key);
        nodes.set(id, {
          id,
          kind: 'entity',
          label: e?.name ?? name,
          weight: e?.mention_count ?? 1,
          data: e ?? { name },
        });
      }
      edges.push({ source: `m:${m.id}`, target: id });
    }
  }
  return { nodes: [...nodes.values()], edges };
}

function describe(node) {
  if (node.kind === 'memory') return `Memory: ${node.label.slice(0, 120)}`;
  const count = node.data?.mention_count;
  return `Entity ${node.label}${count ? `, ${count} mentions` : ''}`;
}

/** The SVG picture plus a details panel; entities are keyboard-focusable. */
function drawGraph({ nodes, edges }, note) {
  if (nodes.length === 0)
    return empty('No entities link the memories here. Entities come from Retain (given, or detected).');
  const placed = forceLayout(nodes, edges, { width: W, height: H });
  const byId = new Map(placed.map((n) => [n.id, n]));
  const neighbours = new Map(placed.map((n) => [n.id, new Set()]));
  for (const e of edges) {
    neighbours.get(e.source)?.add(e.target);
    neighbours.get(e.target)?.add(e.source);
  }
  const maxWeight = Math.max(1, ...placed.filter((n) => n.kind === 'entity').map((n) => n.weight));
  const edgeEls = edges
    .filter((e) => byId.has(e.source) && byId.has(e.target))
    .map((e) => {
      const a = byId.get(e.source);
      const b = byId.get(e.target);
      return s('line', {
        class: 'edge',
        x1: a.x.toFixed(1),
        y1: a.y.toFixed(1),
        x2: b.x.toFixed(1),
        y2: b.y.toFixed(1),
        'data-a': a.id,
        'data-b': b.id,
      });
    });
  const panel = h(
    'div',
    { class: 'graph-panel', 'aria-live': 'polite' },
    h(
      'p',
      { class: 'muted' },
      'Select an entity (click, or Tab and Enter) to see the memories that mention it.',
    ),
  );
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'graph',
    role: 'group',
    'aria-label': `Graph of ${placed.filter((n) => n.kind === 'entity').length} entities and ${placed.filter((n) => n.kind === 'memory').length} memories`,
  });
  const nodeEls = new Map();

  function choose(id) {
    const node = byId.get(id);
    const near = neighbours.get(id) ?? new Set();
    svg.classList.add('focused');
    for (const [nid, el] of nodeEls) el.classList.toggle('lit', nid === id || near.has(nid));
    for (const el of edgeEls) el.classList.toggle('lit', el.dataset.a === id || el.dataset.b === id);
    const linked = [...near].map((n) => byId.get(n)).filter(Boolean);
    if (node.kind === 'entity') {
      panel.replaceChildren(
        h('h3', null, node.label),
        h(
          'p',
          null,
          node.data?.type ? badge(node.data.type) : null,
          ` ${fmtNumber(node.data?.mention_count ?? linked.length)} mentions`,
        ),
        h('h4', null, `Memories here (${linked.length})`),
        h(
          'ul',
          { class: 'linked' },
          linked.map((m) => h('li', null, m.label)),
        ),
      );
    } else {
      fill(
        panel,
        h('h3', null, 'Memory'),
        h('p', null, node.label),
        node.data?.type ? h('p', null, badge(node.data.type, node.data.type)) : null,
        h('h4', null, 'Entities'),
        h(
          'ul',
          { class: 'linked' },
          linked.map((e) =>
            h(
              'li',
              null,
              h(
                'button',
                {
                  type: 'button',
                  class: 'link',
                  onclick: () => {
                    choose(e.id);
                    nodeEls.get(e.id)?.focus();
                  },
                },
                e.label,
              ),
            ),
          ),
        ),
      );
    }
  }

  svg.append(s('g', { class: 'edges' }, edgeEls));
  const layer = s('g', { class: 'nodes' });
  // Memories first, so entity labels sit on top.
  for (const n of [...placed].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'memory' ? -1 : 1))) {
    const shape =
      n.kind === 'entity'
        ? s('circle', { r: (7 + 11 * Math.sqrt(n.weight / maxWeight)).toFixed(1) })
        : s('rect', { x: '-4', y: '-4', width: '8', height: '8', rx: '2' });
    const g = s(
      'g',
      {
        class: `node node-${n.kind}`,
        transform: `translate(${n.x.toFixed(1)} ${n.y.toFixed(1)})`,
        tabindex: n.kind === 'entity' ? '0' : null,
        role: n.kind === 'entity' ? 'button' : null,
        'aria-label': n.kind === 'entity' ? describe(n) : null,
        onclick: () => choose(n.id),
        onkeydown: (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            choose(n.id);
          }
        },
      },
      s('title', null, describe(n)),
      shape,
      n.kind === 'entity'
        ? s(
            'text',
            { x: '0', y: '-14', 'text-anchor': 'middle' },
            n.label.length > 24 ? `${n.label.slice(0, 22)}…` : n.label,
          )
        : null,
    );
    nodeEls.set(n.id, g);
    layer.append(g);
  }
  svg.append(layer);
  return h(
    'div',
    null,
    h(
      'p',
      { class: 'legend muted small' },
      h('span', { class: 'legend-entity', 'aria-hidden': 'true' }),
      ' entity (size: mentions)  ',
      h('span', { class: 'legend-memory', 'aria-hidden': 'true' }),
      ' memory',
      note ? ` · ${note}` : '',
    ),
    h('div', { class: 'graph-layout' }, h('div', { class: 'graph-box' }, svg), panel),
  );
}

export async function graphTab(body, profile) {
  const holder = h('div', null, loading('Loading graph'));
  body.append(section('Graph', holder));
  // One page of memories and the most mentioned entities.
  let entities = [];
  try {
    entities = (await get(bankUrl(profile.id, '/entities'), { limit: 200 })).items ?? [];
  } catch {
    // without graph:read the graph still shows names, only without counts
  }
  const size = select([['25'], ['50'], ['100'], ['200']], { name: 'limit', value: '50' });
  const pages = pager('Graph memories', {
    load: (cursor) => get(bankUrl(profile.id, '/memories'), { limit: size.value, cursor }),
    render: (items) =>
      drawGraph(fromMemories(items, entities), `${items.length} newest memories of this page`),
  });
  holder.replaceChildren(
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (e) => {
          e.preventDefault();
          pages.reload();
        },
      },
      field('Memories per page', size),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Redraw')),
    ),
    pages.element,
  );
  await pages.reload();
}
