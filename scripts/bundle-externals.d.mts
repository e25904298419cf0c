// The types of scripts/bundle-externals.mjs (a plain module: scripts/bundle.mjs and the image's build run it without a compiler).
export declare const BUNDLE_EXTERNALS: string[];
