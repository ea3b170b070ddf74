// The package's version and homepage, read once from package.json. NIP-11 `software` is a URL
// identifying the relay software: the homepage.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string; homepage?: string };

export const VERSION: string = pkg.version;
export const SOFTWARE: string = pkg.homepage ?? 'https://www.npmjs.com/package/orbweaver';
