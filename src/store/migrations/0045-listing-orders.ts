import type { Migration } from './migration.js';

export default {
  version: 45,
  name: 'listings: documents and entities in their order',
  sql: `
-- The document and entity listings page by offset up to 1,000,000 (Hindsight's API). A deep
-- offset is walked in hops of a few thousand sort keys each (store/sql/offset-walk.ts), and each
-- hop starts where the last ended: without an index in the listing's order every hop, and every
-- page, sorted the bank's whole set again.
CREATE INDEX documents_bank_updated ON documents (project_id, bank_id, updated_at DESC, id);
CREATE INDEX entities_bank_mentions ON entities (project_id, bank_id, mention_count DESC, name_key)
  WHERE mention_count > 0;
`,
} satisfies Migration;
