import type { Migration } from './migration.js';

export default {
  version: 25,
  name: 'key banks: an API key may be scoped to some banks',
  sql: `
-- The banks a key may see and touch: exact ids and prefix patterns ending in '*'. NULL = every
-- bank of its project, as every key minted before this migration.
ALTER TABLE api_keys ADD COLUMN banks text[];
`,
} satisfies Migration;
