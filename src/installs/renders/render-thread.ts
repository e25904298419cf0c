// A render thread (src/installs/renders/render-pool.ts): renders one task at a time and answers
// with the files or the reason it could not; given a repository, it writes the files' objects
// there itself and answers with the tree's id. The pool bounds its time and its heap.
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { renderFiles, TemplateRenderError, type RenderBudget } from '../packages/templates.js';
import path from 'node:path';
import { writeTreeObjects } from '../../git/tree-objects.js';
import { DirectoryBytes } from '../../git/directory-bytes.js';
import { renderHash } from './render-hash.js';
import type { RenderAnswer } from './render-pool.js';

export interface RenderTask {
  /** The version's files and the render's values, as stored (JSON): parsed here, not on the event loop. */
  filesJson: string;
  valuesJson: string;
  budget: RenderBudget;
  /** The repository (its git directory) to write the files' blobs and trees into. */
  gitDir?: string;
  /** Set with gitDir: the answers about the objects name their task (the thread renders the next one meanwhile). */
  id?: number;
}

/** What the pool tells a thread as it starts. */
export interface RenderThreadData {
  /** This thread's nice value (RenderPoolOptions.nice). */
  nice: number;
}

/**
 * Linux schedules each thread by its own nice value: this one lowers its own (never the event
 * loop's), found by its thread id. Elsewhere, or where the kernel refuses, renders keep the
 * process's priority, as before.
 */
function lowerOwnPriority(nice: number): void {
  if (nice <= 0) return;
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))?.[1]);
    // At least `nice`: a process started nicer than that keeps its own (raising it back needs privileges).
    if (tid > 0 && os.getPriority(tid) < nice) os.setPriority(tid, nice);
  } catch {
    // No /proc/thread-self (not Linux): nothing to lower.
  }
}
lowerOwnPriority((workerData as RenderThreadData | null)?.nice ?? 0);

/**
 * What this thread found in each repository's object directories when it last counted them
 * (src/git/directory-bytes.ts): the size is measured here, after the render's objects are
 * written, off the event loop. Writes by others (the commit on the event loop, another thread,
 * git) change a directory's mtime, which the count checks.
 */
const sizes = new DirectoryBytes();

parentPort!.on('message', (task: RenderTask) => {
  void answer(task).then(({ message, transfer }) => parentPort!.postMessage(task.id === undefined ? message : { ...message, id: task.id }, transfer));
});

async function answer(task: RenderTask): Promise<{ message: RenderAnswer; transfer: ArrayBuffer[] }> {
  const transfer: ArrayBuffer[] = [];
  let files;
  try {
    files = renderFiles(JSON.parse(task.filesJson) as Record<string, string>, JSON.parse(task.valuesJson) as Record<string, unknown>, task.budget);
  } catch (err) {
    const message: RenderAnswer =
      err instanceof TemplateRenderError ? { ok: false, renderError: err.message } : { ok: false, internal: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    return { message, transfer };
  }
  if (task.gitDir === undefined) {
    const message: RenderAnswer = {
      ok: true,
      files: files.map(({ path, content }) => {
        // A copy with a buffer of its own: small Buffers share a pool that must not be moved away.
        const own = new Uint8Array(content);
        transfer.push(own.buffer);
        return { path, content: own };
      }),
    };
    return { message, transfer };
  }
  // The render is done: its time limit is the template's, not the disk's (the pool stops counting).
  parentPort!.postMessage({ rendered: task.id! } satisfies RenderAnswer);
  try {
    const written = await writeTreeObjects(task.gitDir, files);
    for (const sha of written.objects) sizes.changed(task.gitDir, path.join(task.gitDir, 'objects', sha.slice(0, 2)));
    const repositoryBytes = await sizes.of(task.gitDir);
    return { message: { ok: true, written: { ...written, renderHash: renderHash(files), repositoryBytes } }, transfer };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { message: { ok: false, writeError: { message: e.message ?? String(err), code: e.code } }, transfer };
  }
}
