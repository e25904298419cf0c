// The types of compiled-bundle.js (plain JavaScript beside bin/wsp.js, which runs before any bundle).
export declare const SAVE_HOOK: unique symbol;
export declare function cacheFileOf(source: Buffer | string, cacheDir: string, flags?: readonly string[]): { file: string; bundlePrefix: string };
export declare function runCompiledBundle(
  bundlePath: string,
  cacheDir: string,
): { cache: 'accepted' | 'rejected' | 'absent' | 'off'; save(): boolean; exports: unknown };
