import { effectiveConfig } from '../bank-config.js';
import type { Bank } from '../types.js';

export type Trait = 'skepticism' | 'literalism' | 'empathy';
export type Level = 1 | 2 | 3 | 4 | 5;
export type Disposition = Record<Trait, Level>;

/** What each trait ranges between, for the prompt's headings. */
const SCALE: Record<Trait, string> = {
  skepticism: '1 trusting, 5 skeptical',
  literalism: '1 flexible, 5 literal',
  empathy: '1 detached, 5 empathetic',
};

/**
 * The disposition as concrete behaviour: one instruction per level of each trait. Reflect's
 * prompt carries exactly the three lines of the bank's levels; the extractive answer follows
 * the same table where it can without a model (see extractive.ts).
 */
export const BEHAVIOUR: Record<Trait, Record<Level, string>> = {
  skepticism: {
    1: 'Take the memories at face value: treat every stated fact as true and answer confidently, even from a single mention.',
    2: 'Trust the memories; mention uncertainty only where memories openly disagree.',
    3: 'Weigh the evidence: prefer facts backed by several memories or observations, and say so when an answer rests on a single memory or when memories disagree.',
    4: 'Be critical: point out which claims rest on a single memory, name conflicting memories explicitly, and keep inferences clearly apart from stated facts.',
    5: 'Be strictly evidence-bound: flag every thin (single-source), dated or conflicting piece of evidence, refuse to speculate or fill gaps, and say plainly that the memories do not establish something when they do not.',
  },
  literalism: {
    1: "Read the question's intent generously: answer what the person is really after, connect related memories and draw reasonable inferences beyond their exact wording.",
    2: 'Interpret the question flexibly: cover its evident intent and use closely related memories even when their wording differs.',
    3: 'Balance wording and intent: answer the question as asked, adding closely related facts when they clearly help.',
    4: 'Read the question closely: answer exactly what was asked from what the memories actually say, without stretching their meaning or answering a broader question.',
    5: 'Be strictly literal: answer only the exact question, use only what the memories state word for word, draw no inferences, and say so when the exact answer is not stated.',
  },
  empathy: {
    1: 'Be detached and factual: leave feelings and emotional framing out entirely and state facts only.',
    2: 'Keep a neutral, matter-of-fact tone; mention feelings only when they are what the question is about.',
    3: 'Be considerate: note emotional context from the memories when it matters to the answer, in a neutral tone.',
    4: 'Be warm: take into account how the person felt in the memories, acknowledge those feelings, and phrase sensitive facts with care.',
    5: 'Be deeply empathetic: acknowledge feelings explicitly and first, put the person’s wellbeing and emotional context at the centre of the answer, and deliver difficult facts gently.',
  },
};

export const TRAITS: Trait[] = ['skepticism', 'literalism', 'empathy'];

/** The bank's disposition from its config (defaults 3). */
export function dispositionOf(bank: Bank): Disposition {
  const cfg = effectiveConfig(bank.config);
  return {
    skepticism: cfg.disposition_skepticism as Level,
    literalism: cfg.disposition_literalism as Level,
    empathy: cfg.disposition_empathy as Level,
  };
}

/** One prompt line per trait: name, level, scale and the behaviour of that level. */
export function dispositionLines(d: Disposition): string[] {
  return TRAITS.map((t) => {
    const name = t[0]!.toUpperCase() + t.slice(1);
    return `- ${name} ${d[t]}/5 (${SCALE[t]}): ${BEHAVIOUR[t][d[t]]}`;
  });
}
