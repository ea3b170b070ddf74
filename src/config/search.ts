// NIP-50 search settings (docs/search.md). Owned by the search index (src/store/search).
import { z } from 'zod';
import { int } from './fields.js';

export const searchSchema = z
  .object({
    kinds: z
      .array(z.number().int().min(0).max(65535))
      .default([0])
      .describe('kinds indexed for NIP-50 search: 0 = profiles (name, display_name, nip05, lud16, about), other kinds by their content; empty = no search (NIP-11 then omits 50). A change rebuilds the index at the next start'),
    maxPostings: int(10_000, 'index entries one search filter reads at most; past it the best matches found so far are returned (a very common word cannot make a search slow)', 100),
  })
  .strict()
  .prefault({})
  .describe('NIP-50 search');

/** The store's search options: the search section, plus the trust section's ranking window. */
export function storeSearchOptions(config: { search: { kinds: number[]; maxPostings: number }; trust: { enabled: boolean; searchWindow: number } }): { kinds: number[]; maxPostings: number; rankWindow: number } {
  return { kinds: config.search.kinds, maxPostings: config.search.maxPostings, rankWindow: config.trust.enabled ? config.trust.searchWindow : 0 };
}
