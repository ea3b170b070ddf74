// The package version, read once from package.json.
import { readFileSync } from 'node:fs';

export const VERSION: string = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
export const SOFTWARE = 'orbweaver';
