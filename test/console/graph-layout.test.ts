/** The console's graph layout (a plain ES module of the web app, run here in Node). */
import assert from 'node:assert/strict';
import { test } from 'node:test';

const { forceLayout } = await import(
  new URL('../../src/console/assets/graph-layout.js', import.meta.url).href
);

type Placed = { id: string; x: number; y: number };
const dist = (a: Placed, b: Placed) => Math.hypot(a.x - b.x, a.y - b.y);

/** Two stars (hub + 8 leaves each) joined by one bridge edge, plus one isolated node. */
function twoStars() {
  const nodes = [{ id: 'a' }, { id: 'b' }, { id: 'lonely' }];
  const edges = [{ source: 'a', target: 'b' }];
  for (const hub of ['a', 'b']) {
    for (let i = 0; i < 8; i++) {
      nodes.push({ id: `${hub}${i}` });
      edges.push({ source: hub, target: `${hub}${i}` });
    }
  }
  return { nodes, edges };
}

test('every node lands inside the box, padding kept', () => {
  const { nodes, edges } = twoStars();
  const placed: Placed[] = forceLayout(nodes, edges, { width: 800, height: 500, padding: 30 });
  assert.equal(placed.length, nodes.length);
  for (const p of placed) {
    assert.ok(p.x >= 30 - 1e-9 && p.x <= 770 + 1e-9, `x ${p.x}`);
    assert.ok(p.y >= 30 - 1e-9 && p.y <= 470 + 1e-9, `y ${p.y}`);
  }
});

test('the same graph always gets the same picture', () => {
  const { nodes, edges } = twoStars();
  assert.deepEqual(forceLayout(nodes, edges), forceLayout(nodes, edges));
});

test('linked nodes end up closer than unlinked ones', () => {
  const { nodes, edges } = twoStars();
  const placed: Placed[] = forceLayout(nodes, edges);
  const at = new Map(placed.map((p) => [p.id, p]));
  const leafToOwnHub: number[] = [];
  const leafToOtherHub: number[] = [];
  for (let i = 0; i < 8; i++) {
    leafToOwnHub.push(dist(at.get(`a${i}`)!, at.get('a')!), dist(at.get(`b${i}`)!, at.get('b')!));
    leafToOtherHub.push(dist(at.get(`a${i}`)!, at.get('b')!), dist(at.get(`b${i}`)!, at.get('a')!));
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(
    mean(leafToOwnHub) < mean(leafToOtherHub) * 0.7,
    `${mean(leafToOwnHub)} vs ${mean(leafToOtherHub)}`,
  );
  // no two nodes on top of each other
  for (let i = 0; i < placed.length; i++) {
    for (let j = i + 1; j < placed.length; j++) assert.ok(dist(placed[i]!, placed[j]!) > 5);
  }
});

test('edges to unknown nodes are ignored; tiny graphs are centred', () => {
  assert.deepEqual(forceLayout([], []), []);
  const [one] = forceLayout([{ id: 'x' }], [{ source: 'x', target: 'nowhere' }], { width: 200, height: 100 });
  assert.deepEqual([one.x, one.y], [100, 50]);
  const two: Placed[] = forceLayout([{ id: 'p' }, { id: 'q' }], [{ source: 'p', target: 'q' }], {
    width: 200,
    height: 100,
  });
  assert.ok(two.every((p) => Number.isFinite(p.x) && Number.isFinite(p.y)));
});
