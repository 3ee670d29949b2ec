import type { ConsolidationSource, Memory, ObservationChange, ObservationDetail } from '../types.js';

/** What a new memory meets: the nearest observations (with their proof) and plain memories. */
export interface Neighbourhood {
  memory: ConsolidationSource;
  observations: Memory[];
  details: Map<string, ObservationDetail>;
  memories: Memory[];
}

/** One planned step; `created` says whether it makes a new observation. */
export interface Step {
  change: ObservationChange;
  created: boolean;
  contradiction: boolean;
}
