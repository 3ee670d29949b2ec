import { orgSpaceOf } from '../core/ids.js';

/** A memory as structured content carries it (dates already ISO strings). */
interface MemoryJson {
  id: string;
  bank_id: string;
  type: string;
  text: string;
  context: string | null;
  occurred_start: string | null;
  occurred_end: string | null;
  mentioned_at: string | null;
  tags: string[];
}

const day = (iso: string | null) => iso?.slice(0, 10) ?? null;

/** One line per memory for a model to read: type, text, when, tags, where from, id (to delete it). */
export function memoryLine(m: MemoryJson): string {
  const notes: string[] = [];
  const start = day(m.occurred_start);
  const end = day(m.occurred_end);
  if (start) notes.push(`happened ${start}${end && end !== start ? ` to ${end}` : ''}`);
  const mentioned = day(m.mentioned_at);
  if (mentioned) notes.push(`noted ${mentioned}`);
  if (m.tags.length) notes.push(`tags ${m.tags.join(', ')}`);
  const org = orgSpaceOf(m.bank_id);
  if (org !== null) notes.push(`from the org bank of ${org}`);
  notes.push(`id ${m.id}`);
  const context = m.context ? ` (${m.context})` : '';
  return `[${m.type}] ${m.text}${context} — ${notes.join('; ')}`;
}

interface BankJson {
  id: string;
  space_id: string | null;
  is_org_bank: boolean;
  memory_count: number;
  entity_count: number;
  document_count: number;
}

/** A bank in one line: id, space, counts. */
export function bankLine(b: BankJson): string {
  const where = b.is_org_bank ? 'org bank' : b.space_id ? `in space ${b.space_id}` : 'no space';
  return `${b.id} (${where}): ${b.memory_count} memories, ${b.entity_count} entities, ${b.document_count} documents`;
}
