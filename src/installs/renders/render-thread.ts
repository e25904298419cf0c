// A render thread (src/installs/renders/render-pool.ts): renders one task at a time and answers
// with the files or the reason it could not. The pool bounds its time and its heap.
import { parentPort } from 'node:worker_threads';
import { renderFiles, TemplateRenderError, type RenderBudget } from '../packages/templates.js';
import type { RenderAnswer } from './render-pool.js';

export interface RenderTask {
  /** The version's files and the render's values, as stored (JSON): parsed here, not on the event loop. */
  filesJson: string;
  valuesJson: string;
  budget: RenderBudget;
}

parentPort!.on('message', (task: RenderTask) => {
  let answer: RenderAnswer;
  const transfer: ArrayBuffer[] = [];
  try {
    const files = renderFiles(JSON.parse(task.filesJson) as Record<string, string>, JSON.parse(task.valuesJson) as Record<string, unknown>, task.budget);
    answer = {
      ok: true,
      files: files.map(({ path, content }) => {
        // A copy with a buffer of its own: small Buffers share a pool that must not be moved away.
        const own = new Uint8Array(content);
        transfer.push(own.buffer);
        return { path, content: own };
      }),
    };
  } catch (err) {
    answer = err instanceof TemplateRenderError ? { ok: false, renderError: err.message } : { ok: false, internal: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  parentPort!.postMessage(answer, transfer);
});
