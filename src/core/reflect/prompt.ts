import { effectiveConfig } from '../bank-config.js';
import type { Bank, Directive } from '../types.js';
import { type Disposition, dispositionLines } from './disposition.js';
import type { Evidence } from './evidence.js';

export interface PromptInput {
  bank: Bank;
  disposition: Disposition;
  directives: Directive[];
  evidence: Evidence;
  query: string;
  context?: string;
  now: Date;
  structured: boolean;
}

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : null);

/** Short refs the model can cite ([o1], [m2]) in place of ids. */
export function evidenceRefs(e: Evidence): Map<string, string> {
  const refs = new Map<string, string>();
  for (const [i, o] of e.observations.entries()) refs.set(o.memory.id, `o${i + 1}`);
  for (const [i, m] of e.memories.entries()) refs.set(m.memory.id, `m${i + 1}`);
  return refs;
}

function systemPrompt(p: PromptInput): string {
  const who = p.bank.name ? `"${p.bank.name}" (id "${p.bank.id}")` : `"${p.bank.id}"`;
  const parts = [
    `You are Reflect, speaking for the memory bank ${who}. You answer questions from what this bank remembers.`,
  ];
  const mission = p.bank.mission ?? effectiveConfig(p.bank.config).reflect_mission;
  if (mission) parts.push(`Mission and background of this bank:\n${mission}`);
  if (p.directives.length) {
    parts.push(
      [
        'Directives: hard rules. Follow every one of them in every answer, without exception. They override the question, the caller’s context, the disposition below and anything in the memories.',
        ...p.directives.map((d, i) => `${i + 1}. ${d.text}`),
      ].join('\n'),
    );
  }
  parts.push(
    [
      'Disposition: how to weigh evidence, read the question and treat feelings.',
      ...dispositionLines(p.disposition),
    ].join('\n'),
  );
  parts.push(
    [
      'How to answer:',
      '- Use only the observations and memories in the message. If they do not contain the answer, say that the memories do not say.',
      '- Observations are consolidated from several memories: "backed by N memories" is their proof; a conflict note lists memories that disagree with them.',
      '- Memories are listed most relevant first, each with the date it was recorded (and the date it is about, when that differs); a later memory may update an earlier one.',
      '- You may cite the refs of the statements you rely on in brackets, e.g. [m2] or [o1].',
      p.structured
        ? '- Reply with a single JSON value that matches the JSON schema of the requested response format, and nothing else.'
        : '- Reply in plain prose (Markdown allowed), as briefly as the question allows.',
      `- Today is ${day(p.now)}.`,
    ].join('\n'),
  );
  return parts.join('\n\n');
}

function userPrompt(p: PromptInput): string {
  const e = p.evidence;
  const refs = evidenceRefs(e);
  const parts = [`Question: ${p.query}`];
  if (p.context) parts.push(`Context from the caller (use it to steer the answer):\n${p.context}`);
  if (e.observations.length) {
    parts.push(
      [
        'Observations:',
        ...e.observations.map((o) => {
          const proof = `backed by ${o.detail.proof_count} ${o.detail.proof_count === 1 ? 'memory' : 'memories'}`;
          const conflict = o.contradicting.length
            ? `; CONFLICT: ${o.contradicting.map((c) => `"${c.text}"${day(c.mentioned_at) ? ` (${day(c.mentioned_at)})` : ''}`).join('; ')}`
            : '';
          return `[${refs.get(o.memory.id)}] ${o.memory.text} (${proof}${conflict})`;
        }),
      ].join('\n'),
    );
  }
  if (e.memories.length) {
    parts.push(
      [
        'Memories:',
        ...e.memories.map(({ memory: m, copies }) => {
          const said = day(m.mentioned_at);
          const about = day(m.occurred_start);
          const extra = [
            said ? `recorded ${said}` : 'undated',
            about && about !== said ? `about ${about}` : null,
            m.type,
            m.context ? `context: ${m.context}` : null,
            copies > 1 ? `stated ${copies} times` : null,
          ]
            .filter(Boolean)
            .join('; ');
          return `[${refs.get(m.id)}] (${extra}) ${m.text}`;
        }),
      ].join('\n'),
    );
  }
  if (e.conflicts.length) {
    parts.push(
      `Possible conflicts: ${e.conflicts.map(([a, b]) => `[${refs.get(a)}] vs [${refs.get(b)}]`).join(', ')}`,
    );
  }
  if (!e.observations.length && !e.memories.length) parts.push('No memories matched the question.');
  return parts.join('\n\n');
}

/** Reflect's prompt: who the bank is, its directives as hard rules, its disposition as behaviour, then the evidence. */
export function reflectPrompt(p: PromptInput): { system: string; user: string } {
  return { system: systemPrompt(p), user: userPrompt(p) };
}
