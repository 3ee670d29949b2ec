import type { FactType } from '../../text/fact-type.js';
import type { EntityInput } from '../types.js';

/** One item of a Retain: its content and everything else that decides what it stores. */
export interface RetainItem {
  content: string;
  fact_type?: FactType;
  context?: string;
  timestamp?: Date;
  entities?: EntityInput[];
  resolve_entities?: boolean;
  tags?: string[];
  metadata?: Record<string, unknown>;
  document_id?: string;
  update_mode?: 'replace' | 'append';
  /**
   * Stored as given: one memory of exactly this text, type, entities and these dates (null
   * included), with no extraction (an imported fact). Not part of the HTTP Retain body.
   */
  verbatim?: { occurred_start: string | null; occurred_end: string | null };
}
