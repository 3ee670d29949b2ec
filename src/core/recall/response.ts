import type { Memory } from '../types.js';

export const STAGES = ['semantic', 'keyword', 'graph', 'temporal', 'reranker', 'final'] as const;
export type Stage = (typeof STAGES)[number];

export interface RecallResult extends Memory {
  scores: Record<Stage, number>;
}

export interface RecallResponse {
  results: RecallResult[];
  usage: { tokens_used: number; max_tokens: number; truncated: boolean; org_blended: boolean };
}
