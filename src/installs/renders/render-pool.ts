import { Worker } from 'node:worker_threads';
import { TemplateRenderError, type RenderBudget, type RenderedFile } from '../packages/templates.js';
import type { RenderTask, RenderThreadData } from './render-thread.js';

/** WSP_RENDER_* (src/config.ts). */
export interface RenderPoolOptions {
  /** Render threads of this process. */
  threads: number;
  /** One workspace's renders under way at once in this process. */
  perWorkspace: number;
  /** The longest one render may run; then its thread is stopped and the render fails. */
  timeoutMs: number;
  /** A render thread's heap. */
  memoryMb: number;
  /**
   * How far below the event loop a render thread stands for the cores (its nice value, Linux):
   * renders take what requests leave (docs/decisions.md, "Render threads yield the cores to
   * requests"). 0: the process's own.
   */
  nice?: number;
}

/** A render's files written into a repository by its thread: the root tree, every object of it, and the files' render_hash. */
export interface RenderWritten {
  tree: string;
  objects: string[];
  renderHash: string;
  /** What the repository takes on disk with these objects written, counted by the thread. */
  repositoryBytes: number;
}

export type RenderAnswer =
  | { ok: true; files: { path: string; content: Uint8Array }[] }
  | { ok: true; written: RenderWritten }
  /** Sent before a render's objects are written (with the task's id): the time limit stops there, and the thread takes the next render. */
  | { rendered: number }
  | { ok: false; renderError: string }
  | { ok: false; writeError: { message: string; code: string | undefined } }
  | { ok: false; internal: string };

/** The workspace already has its share of the render threads: the render waits its turn (a job retried later). */
export class WorkspaceRendersBusy extends Error {}

/** How long a render waits for one of its workspace's places before its job is put back. */
const TURN_WAIT_MS = 2000;

/** A thread left idle this long is stopped; the next render starts one again (about 30 ms). */
const IDLE_THREAD_MS = 30_000;

// Set by the bundlers (scripts/bundle.mjs, scripts/build-tests.mjs) to the render thread's own
// bundle; unbundled (tsc's dist/, or tsx running src/), the thread's module sits beside this one.
declare const WSP_RENDER_THREAD_MODULE: string | undefined;

function threadUrl(): URL {
  if (typeof WSP_RENDER_THREAD_MODULE === 'string') return new URL(WSP_RENDER_THREAD_MODULE, import.meta.url);
  return new URL(import.meta.url.endsWith('.ts') ? './render-thread.ts' : './render-thread.js', import.meta.url);
}

interface Idle {
  thread: Worker;
  timer: NodeJS.Timeout;
}

/**
 * Renders templates on threads beside the event loop, so that a template that loops for
 * seconds delays only itself and the API keeps answering. Each render is bounded in steps and
 * output (its budget, checked by the renderer), in time (the thread is stopped) and in memory
 * (the thread's heap limit); a workspace gets at most `perWorkspace` of the threads at once.
 */
export class RenderPool {
  private readonly idle: Idle[] = [];
  private live = 0;
  private readonly waiting: ((thread: Worker) => void)[] = [];
  private readonly byWorkspace = new Map<string, number>();
  /** Per workspace: renders waiting for one of its places. */
  private readonly turns = new Map<string, (() => void)[]>();
  private readonly writes = new WeakMap<Worker, Map<number, { resolve: (w: RenderWritten) => void; reject: (e: Error) => void }>>();
  private lastTaskId = 0;

  constructor(private readonly opts: RenderPoolOptions) {}

  /**
   * Renders a version's files (JSON as stored) with the values (JSON). The render's own failures
   * (a missing value, a limit reached) are TemplateRenderErrors; a workspace at its share throws
   * WorkspaceRendersBusy before anything is started.
   */
  async render(workspaceId: string, filesJson: string, valuesJson: string, budget: RenderBudget): Promise<RenderedFile[]> {
    return (await this.task(workspaceId, { filesJson, valuesJson, budget })) as RenderedFile[];
  }

  /**
   * Renders as render() does, and writes the files' blobs and trees into the repository at
   * `gitDir` on the same thread (src/git/tree-objects.ts): the event loop receives the tree's
   * id, not the files. A write that fails rejects with its error (its errno as `code`).
   */
  async renderInto(workspaceId: string, filesJson: string, valuesJson: string, budget: RenderBudget, gitDir: string): Promise<RenderWritten> {
    return (await this.task(workspaceId, { filesJson, valuesJson, budget, gitDir })) as RenderWritten;
  }

  private async task(workspaceId: string, task: RenderTask): Promise<RenderedFile[] | RenderWritten> {
    await this.admit(workspaceId);
    try {
      const thread = await this.take();
      return await this.run(thread, task);
    } finally {
      const left = this.byWorkspace.get(workspaceId)! - 1;
      if (left === 0) this.byWorkspace.delete(workspaceId);
      else this.byWorkspace.set(workspaceId, left);
      this.turns.get(workspaceId)?.shift()?.();
    }
  }

  /**
   * Takes one of the workspace's places, waiting up to TURN_WAIT_MS for one to free: renders of
   * a few milliseconds each just follow one another, while a workspace whose renders run long
   * gets WorkspaceRendersBusy and gives the caller (a job slot) back to the others.
   */
  private async admit(workspaceId: string): Promise<void> {
    const deadline = Date.now() + TURN_WAIT_MS;
    while ((this.byWorkspace.get(workspaceId) ?? 0) >= this.opts.perWorkspace) {
      const waited = Date.now();
      if (waited >= deadline) throw new WorkspaceRendersBusy(`the workspace already has ${this.opts.perWorkspace} renders under way`);
      await new Promise<void>((resolve) => {
        const queue = this.turns.get(workspaceId) ?? [];
        this.turns.set(workspaceId, queue);
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          queue.splice(queue.indexOf(wake), 1);
          resolve();
        }, deadline - waited);
        queue.push(wake);
      });
      if (this.turns.get(workspaceId)?.length === 0) this.turns.delete(workspaceId);
    }
    this.byWorkspace.set(workspaceId, (this.byWorkspace.get(workspaceId) ?? 0) + 1);
  }

  /** Stops every idle thread (those under way stop at their render's end or time limit). */
  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map(({ thread, timer }) => (clearTimeout(timer), this.live--, thread.terminate())));
  }

  private take(): Promise<Worker> {
    const idle = this.idle.pop();
    if (idle) {
      clearTimeout(idle.timer);
      idle.thread.ref();
      return Promise.resolve(idle.thread);
    }
    if (this.live < this.opts.threads) {
      this.live++;
      const url = threadUrl();
      const options = {
        resourceLimits: { maxOldGenerationSizeMb: this.opts.memoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
        workerData: { nice: this.opts.nice ?? 0 } satisfies RenderThreadData,
        // The thread's own output is the server's: nothing of a tenant's template reaches it.
        stdout: false,
        stderr: false,
      };
      // Run from source by tsx (test helpers that start a server that way): tsx's loader is not
      // a thread's own, so the thread registers it before loading its TypeScript module.
      const thread = url.pathname.endsWith('.ts')
        ? new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { ...options, eval: true })
        : new Worker(url, options);
      return Promise.resolve(thread);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** A thread whose render ended normally serves the next one waiting, or waits itself. */
  private release(thread: Worker): void {
    const next = this.waiting.shift();
    if (next) return next(thread);
    // An idle thread keeps no process alive, unless it is still writing a render's objects.
    if ((this.writes.get(thread)?.size ?? 0) === 0) thread.unref();
    const timer = setTimeout(() => {
      const at = this.idle.findIndex((i) => i.thread === thread);
      if (at < 0) return;
      // Still writing a render's objects: stopped at its next idle time instead.
      if ((this.writes.get(thread)?.size ?? 0) > 0) {
        this.idle.splice(at, 1);
        return this.release(thread);
      }
      this.idle.splice(at, 1);
      this.live--;
      void thread.terminate();
    }, IDLE_THREAD_MS);
    timer.unref();
    this.idle.push({ thread, timer });
  }

  /** A thread that was stopped or died: its place goes to a new thread for whoever waits. */
  private discard(thread: Worker): void {
    this.failWrites(thread, new Error("the render thread was stopped (another render's limit) while writing the render's objects"));
    thread.removeAllListeners();
    void thread.terminate();
    this.live--;
    const next = this.waiting.shift();
    if (next) void this.take().then(next);
  }

  private run(thread: Worker, task: RenderTask): Promise<RenderedFile[] | RenderWritten> {
    const seconds = this.opts.timeoutMs / 1000;
    return new Promise<RenderedFile[] | RenderWritten>((resolve, reject) => {
      const detach = () => {
        clearTimeout(timer);
        thread.off('message', onMessage).off('error', onError).off('exit', onExit);
      };
      const done = (outcome: () => void, keep: boolean) => {
        detach();
        if (keep) this.release(thread);
        else this.discard(thread);
        outcome();
      };
      const timer = setTimeout(() => done(() => reject(new TemplateRenderError(`the render ran longer than ${seconds} seconds and was stopped`)), false), this.opts.timeoutMs);
      const onMessage = (answer: RenderAnswer) => {
        if ('rendered' in answer) {
          // The files are made: the thread takes the next render while the disk writes these (its
          // fsyncs wait on libuv's pool, not on the thread), and their answer comes by its id.
          // Writing waits on the disk, which a template cannot make slow: not timed.
          detach();
          this.writing(thread).set(answer.rendered, { resolve, reject });
          return this.release(thread);
        }
        if (answer.ok && 'written' in answer) return;
        if ('writeError' in answer) return;
        if (answer.ok) {
          const files = answer.files.map(({ path, content }) => ({ path, content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) }));
          return done(() => resolve(files), true);
        }
        if ('renderError' in answer) return done(() => reject(new TemplateRenderError(answer.renderError)), true);
        done(() => reject(new Error(`render thread: ${answer.internal}`)), false);
      };
      const onError = (err: Error & { code?: string }) => {
        const own = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
        done(() => reject(own ? new TemplateRenderError(`the render needed more than ${this.opts.memoryMb} MB of memory and was stopped`) : err), false);
      };
      const onExit = (code: number) => done(() => reject(new Error(`the render thread exited (code ${code})`)), false);
      thread.on('message', onMessage).on('error', onError).on('exit', onExit);
      thread.postMessage(task.gitDir === undefined ? task : { ...task, id: ++this.lastTaskId });
    });
  }

  /**
   * The thread's renders whose objects it is writing, by task id: answered by the thread's own
   * listener, which stays for the thread's life. A thread that dies or is stopped (another
   * render's time or memory) fails them with an error that is not the render's (the job retries).
   */
  private writing(thread: Worker): Map<number, { resolve: (w: RenderWritten) => void; reject: (e: Error) => void }> {
    let writes = this.writes.get(thread);
    if (writes) return writes;
    const own = new Map<number, { resolve: (w: RenderWritten) => void; reject: (e: Error) => void }>();
    this.writes.set(thread, own);
    thread.on('message', (answer: RenderAnswer & { id?: number }) => {
      const waiting = answer.id === undefined ? undefined : own.get(answer.id);
      if (!waiting) return;
      own.delete(answer.id!);
      if (own.size === 0 && this.idle.some((i) => i.thread === thread)) thread.unref();
      if ('written' in answer) waiting.resolve(answer.written);
      else if ('writeError' in answer) waiting.reject(Object.assign(new Error(answer.writeError.message), { code: answer.writeError.code }));
    });
    thread.on('exit', (code) => this.failWrites(thread, new Error(`the render thread exited (code ${code}) while writing the render's objects`)));
    writes = own;
    return writes;
  }

  private failWrites(thread: Worker, err: Error): void {
    const writes = this.writes.get(thread);
    if (!writes) return;
    for (const w of writes.values()) w.reject(err);
    writes.clear();
  }
}

const pools = new WeakMap<RenderPoolOptions, RenderPool>();

/**
 * The process's pool for these settings: the job runner's renders and the API's previews share
 * its threads and each workspace's places.
 */
export function renderPoolFor(opts: RenderPoolOptions): RenderPool {
  let pool = pools.get(opts);
  if (!pool) pools.set(opts, (pool = new RenderPool(opts)));
  return pool;
}
