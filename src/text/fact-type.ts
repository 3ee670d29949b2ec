/**
 * Rule-based fact type for memories retained without a language model. A handful of cue
 * phrases per type, checked in a fixed order so that the more specific reading wins: a
 * correction or a set of instructions is that whatever else it mentions, a stated preference
 * outranks the event it is attached to, and a first-person past event outranks the reasons
 * given for it. Anything without a cue is a statement about the world.
 */

import { FACT_TYPES, type FactType } from '../contract/vocabulary.js';

// Kinds of memory are part of the wire contract.
export { FACT_TYPES, type FactType };

const CORRECTION = [
  // Chat says "actually" all the time; it corrects when a negation or "instead" comes with it.
  /(?:^|[.!?,;:]\s*)actually\b[^.!?]*(?:\bnot\b|n't\b|\binstead\b|\bwrong\b)/,
  /\bcorrection\b/,
  /\bi was (?:wrong|mistaken)\b/,
  /\bi misspoke\b/,
  /\b(?:sorry, )?i meant\b/,
  /\bscratch that\b/,
  /\bthat(?:'s| is| was)(?: not|n't) (?:right|true|correct)\b|\bthat(?:'s| is| was) incorrect\b/,
  /\bno longer\b/,
  /\bnot (?!only\b)\w+(?: \w+)?,? but\b/,
  /, not (?:a |an |the )?\w+[.!]?$/,
];

const PROCEDURE = [
  /(?:^|[.!?:]\s*)(?:here's |here is |this is )?how to\b/,
  /\bsteps?\s*\d/,
  /^\s*\d+[.)]\s/m,
  /\bfirst\b,? (?!(?:i|we|he|she|they|you|my|our|it)\b)\w+.*\bthen\b/,
  /^to (?!be honest|be fair|me\b)\w+[^,.]*, /,
  /^(?:make sure|remember to|don't forget to|be sure to|never forget to)\b/,
  // Imperative openings: a bare verb addressed to the reader.
  /^(?:add|mix|stir|pour|preheat|bake|boil|chop|open|click|press|select|install|run|type|enter|set|turn|put|place|insert|remove|connect|download|restart|go to|navigate to)\b/,
];

const PREFERENCE = [
  /\b(?:i|we|you|they)(?: really| totally| absolutely| just| also| still| do(?:n't| not)| genuinely)? (?:like|love|prefer|hate|dislike|enjoy|adore|detest|despise)\b/,
  /\b(?:likes|loves|prefers|hates|dislikes|enjoys|adores)\b/,
  /\b(?:can't|cannot) stand\b/,
  /\bfavou?rite\b|\bfave\b/,
  /\b(?:i'd|i would|we'd|we would) rather\b/,
  /\b(?:i'm|i am) (?:a (?:big |huge )?fan of|into|not a fan of)\b/,
];

const PROFILE = [
  /\bmy name is\b|\b(?:i'm|i am) called\b|\bcall me\b/,
  /\b(?:i'm|i am) (?:a|an) (?!(?:bit|little|lot|fan|huge|big|great|good|bad|real|total|few)\b)\w+/,
  /\b(?:live|lives) in\b|\b(?:i'm|i am) from\b|\bgrew up in\b/,
  /\byears old\b|\b(?:i'm|i am) \d+\b|\bwas born\b/,
  /\bworks? (?:as|at|for)\b/,
  /\bmy (?:job|birthday|age|pronouns|wife|husband|partner|kids|children|son|daughter|sister|brother|mom|dad|mother|father) (?:is|are)\b/,
  /\b(?:i'm|i am) (?:married|single|divorced|engaged|retired|vegan|vegetarian)\b/,
  /\bi have (?:a|an|one|two|three|four|\d+) (?:kids?|children|sons?|daughters?|dogs?|cats?|pets?|siblings?|brothers?|sisters?)\b/,
];

const EXPERIENCE = [
  /\b(?:i|we)(?: just| finally| also| recently| actually| even| once| already)? (?:went|visited|saw|met|did|had|made|took|got|bought|ate|drank|ran|won|lost|read|wrote|flew|drove|spent|found|gave|began|sang|swam|felt|heard|left|sent|built|taught|caught|came|became|sat|stood|told|thought)\b/,
  /\b(?:i|we)(?: just| finally| also| recently| actually| even| once| already)? (?!(?:need|feed|bleed|breed|heed|proceed|succeed|exceed|shed)\b)[a-z]+ed\b/,
  /\b(?:i've|we've|i have|we have) (?:just |finally |recently |already )?(?:been|done|seen|visited|tried|started|finished|met|made|gone)\b/,
  /\b(?:yesterday|last (?:night|week|weekend|month|year|summer|winter|spring|fall|\w+day)|ago)\b.*\b(?:i|we)\b|\b(?:i|we)\b.*\b(?:yesterday|last (?:night|week|weekend|month|year)|ago)\b/,
];

const REASONING = [
  /\bbecause\b|\btherefore\b|\bthus\b|\bhence\b|\bconsequently\b/,
  /\bso i think\b|\bi think (?:that|it's|this|they|he|she)\b|\bi believe (?!in\b)|\bi guess\b|\bi suspect\b/,
  /\b(?:which|that|this) means (?!a lot\b|so much\b|the world\b)|\bthat's why\b|\bthis is why\b|\bthe reason\b|\bas a result\b/,
  /\bprobably\b/,
];

const OBSERVATION = [
  /\b(?:usually|always|often|typically|generally|frequently|rarely|seldom|habitually|regularly)\b/,
  /\btends? to\b|\bseems? to\b|\bkeeps? \w+ing\b/,
  /\bevery (?:day|night|week|weekend|month|morning|evening|time|year|\w+day)\b|\bmost of the time\b|\bwhenever\b|\beach time\b/,
];

const RULES: [FactType, RegExp[]][] = [
  ['correction', CORRECTION],
  ['procedure', PROCEDURE],
  ['preference', PREFERENCE],
  ['profile', PROFILE],
  ['experience', EXPERIENCE],
  ['reasoning', REASONING],
  ['observation', OBSERVATION],
];

// A transcript speaker label ("Caroline: ...") would hide sentence-initial cues.
const SPEAKER = /^\s*\p{L}[\p{L}'.-]*(?:\s+\p{L}[\p{L}'.-]*){0,2}\s*:\s+/u;

/**
 * Characters read for cues. Several cue patterns pair two phrases across a line ("yesterday
 * ... I"), which costs time quadratic in the line on adversarial text; a memory is a chunk of
 * about 1,000 tokens, well within this, so only larger direct input is cut.
 */
const MAX_CLASSIFIED = 10_000;

/** Classifies a memory's text into a {@link FactType} by cue phrases; `world` if none match. */
export function classifyFactType(text: string): FactType {
  const full = text
    .slice(0, MAX_CLASSIFIED)
    .replace(/[\u2018\u2019]/g, "'")
    .toLowerCase()
    .trim();
  // The label may itself be the cue ("Correction: ..."), so both readings are tried.
  const body = full.replace(SPEAKER, '');
  for (const [type, patterns] of RULES) {
    if (patterns.some((p) => p.test(body) || (body !== full && p.test(full)))) return type;
  }
  return 'world';
}
