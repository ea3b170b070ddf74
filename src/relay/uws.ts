// Loads uWebSockets.js. The package silently falls back to a slow pure-JS shim when its native
// binary does not match this Node ABI (only Node 16/18/20 builds exist), so we load the binary
// ourselves and use the shim only when the operator explicitly allows it.
import { createRequire } from 'node:module';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

export type Uws = typeof UWS;

export interface LoadedUws {
  uws: Uws;
  native: boolean;
  /** why the native binary could not load, when it could not */
  error?: string;
}

export function loadUws(allowJsFallback: boolean): LoadedUws {
  const pkgDir = require.resolve('@trufflesuite/uws-js-unofficial/package.json').replace(/package\.json$/, '');
  const binary = `${pkgDir}binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return { uws: require(binary) as Uws, native: true };
  } catch (e) {
    const error = `native uWebSockets.js binary ${binary} did not load: ${(e as Error).message.split('\n')[0]}`;
    if (!allowJsFallback) {
      throw new Error(`${error}. Use Node 20 (the binaries exist for Node 16/18/20 only), or set allowJsFallback / ORBWEAVER_ALLOW_JS_FALLBACK=1 to run on the slow pure-JS shim.`);
    }
    return { uws: require(`${pkgDir}dist/index`) as Uws, native: false, error };
  }
}
