import type { RetainItem } from './item.js';

/** An item as a document's kept source holds it: what decides what it stores, dates as ISO text. */
type SourceItem = Omit<RetainItem, 'document_id' | 'update_mode' | 'timestamp'> & { timestamp?: string };

/**
 * What a document was retained from, kept beside it (sealed in an encrypted bank) so that its
 * extraction can be run again: the items' content and everything else that decides what they
 * store, never their document id (the document's own) or update mode.
 */
export function documentSource(items: readonly RetainItem[]): string {
  return JSON.stringify(
    items.map(
      ({ document_id: _d, update_mode: _u, timestamp, ...rest }): SourceItem => ({
        ...rest,
        ...(timestamp ? { timestamp: timestamp.toISOString() } : {}),
      }),
    ),
  );
}

/** The items of a kept source, as a Retain takes them. */
export function sourceItems(source: string): RetainItem[] {
  return (JSON.parse(source) as SourceItem[]).map(({ timestamp, ...rest }) => ({
    ...rest,
    ...(timestamp ? { timestamp: new Date(timestamp) } : {}),
  }));
}
