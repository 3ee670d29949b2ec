/**
 * A small force-directed layout (Fruchterman–Reingold): nodes repel, edges pull, a weak
 * gravity keeps separate components on screen, and the step size cools to zero. The start
 * is a deterministic spiral, so one graph always gets the same picture. O(n²) per step, meant
 * for the few hundred nodes of one page.
 */

/**
 * @param {{id: string}[]} nodes
 * @param {{source: string, target: string}[]} edges
 * @param {{width?: number, height?: number, iterations?: number, padding?: number}} [opts]
 * @returns {{id: string, x: number, y: number}[]} the nodes with positions inside the box
 */
export function forceLayout(
  nodes,
  edges,
  { width = 800, height = 560, iterations = 300, padding = 40 } = {},
) {
  const n = nodes.length;
  if (n === 0) return [];
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const links = [];
  for (const e of edges) {
    const a = index.get(e.source);
    const b = index.get(e.target);
    if (a !== undefined && b !== undefined && a !== b) links.push([a, b]);
  }
  const cx = width / 2;
  const cy = height / 2;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    // Golden-angle spiral: evenly spread, no randomness.
    const r = 12 * Math.sqrt(i + 0.5);
    const a = i * 2.399963;
    x[i] = cx + r * Math.cos(a);
    y[i] = cy + r * Math.sin(a);
  }
  const k = 0.75 * Math.sqrt((width * height) / n);
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  let step = width / 8;
  const cool = step / (iterations + 1);
  for (let it = 0; it < iterations; it++) {
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const ddx = x[i] - x[j];
        const ddy = y[i] - y[j];
        const d = Math.max(Math.hypot(ddx, ddy), 0.01);
        const f = (k * k) / d / d;
        dx[i] += ddx * f;
        dy[i] += ddy * f;
        dx[j] -= ddx * f;
        dy[j] -= ddy * f;
      }
    }
    for (const [a, b] of links) {
      const ddx = x[a] - x[b];
      const ddy = y[a] - y[b];
      const d = Math.max(Math.hypot(ddx, ddy), 0.01);
      const f = d / k;
      dx[a] -= ddx * f;
      dy[a] -= ddy * f;
      dx[b] += ddx * f;
      dy[b] += ddy * f;
    }
    for (let i = 0; i < n; i++) {
      dx[i] += (cx - x[i]) * 0.08;
      dy[i] += (cy - y[i]) * 0.08;
      const len = Math.hypot(dx[i], dy[i]);
      if (len > 0) {
        const move = Math.min(len, step) / len;
        x[i] += dx[i] * move;
        y[i] += dy[i] * move;
      }
    }
    step -= cool;
  }
  // Fit the result into the box, keeping the aspect ratio.
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    minX = Math.min(minX, x[i]);
    maxX = Math.max(maxX, x[i]);
    minY = Math.min(minY, y[i]);
    maxY = Math.max(maxY, y[i]);
  }
  const spanX = maxX - minX || 1;
  const spanY = maxY - minY || 1;
  const scale = Math.min((width - 2 * padding) / spanX, (height - 2 * padding) / spanY);
  const offX = (width - spanX * scale) / 2;
  const offY = (height - spanY * scale) / 2;
  return nodes.map((node, i) => ({
    ...node,
    x: n === 1 ? cx : offX + (x[i] - minX) * scale,
    y: n === 1 ? cy : offY + (y[i] - minY) * scale,
  }));
}
