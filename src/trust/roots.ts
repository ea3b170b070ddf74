// Whom the rank is personalised to: trust.roots, else the spider's seeds and admins.
import type { Config } from '../config.js';

export function trustRoots(config: Pick<Config, 'trust' | 'spider'>): string[] {
  const roots = config.trust.roots.length > 0 ? config.trust.roots : [...config.spider.seeds, ...config.spider.admins];
  return [...new Set(roots)];
}
