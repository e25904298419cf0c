/**
 * The code cache of the bundle this process runs from (bin/compiled-bundle.js), when it runs from
 * one: what became of the cache at start ('accepted', 'rejected', 'absent', 'off' under --enable-source-maps), and `save()`, which
 * writes the bytecode compiled so far when none was accepted (true when it wrote).
 */
export interface CompileCache {
  readonly cache: 'accepted' | 'rejected' | 'absent' | 'off';
  save(): boolean;
}

export const compileCache = (): CompileCache | undefined => (globalThis as Record<symbol, CompileCache | undefined>)[Symbol.for('wsp.compileCache')];
