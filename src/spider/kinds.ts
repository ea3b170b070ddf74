// The kinds the spider fetches and follows live: spider.kinds, plus with spider.allLists the other
// replaceable lists (10000-19999) that NIPs define. The range itself is not asked for as a range:
// a filter cannot say "10000 to 19999" and a crawl fetches kind by kind, so the option names the
// defined ones (an unknown kind in that range carries nothing a directory client looks up).
import type { Config } from '../config/schema.js';

/** Replaceable list kinds defined by NIPs (NIP-51 lists, NIP-65, NIP-17, NIP-B7, NIP-61, NIP-66 …). */
export const DEFINED_LISTS = [
  10000, 10001, 10002, 10003, 10004, 10005, 10006, 10007, 10009, 10012, 10013, 10015, 10017, 10019, 10020, 10030,
  10050, 10063, 10101, 10102,
];

export function directoryKinds(cfg: Pick<Config['spider'], 'kinds' | 'allLists'>): number[] {
  const out = new Set(cfg.kinds);
  if (cfg.allLists) for (const k of DEFINED_LISTS) out.add(k);
  return [...out];
}
