import type { Migration } from './migration.js';

export default {
  version: 34,
  name: 'document sources: the items a document was retained from, kept for reprocessing',
  sql: `
-- What a document was retained from (its items as JSON: content, context, timestamp, tags,
-- metadata, entities), so that its extraction can be run again (documents/{id}/reprocess).
-- Sealed in an encrypted bank like memory text; NULL when not kept (retained before this
-- migration, or appended to). It lives and dies with the document row.
ALTER TABLE documents ADD COLUMN source text;
`,
} satisfies Migration;
