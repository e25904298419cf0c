import { stringFlag, UsageError } from '../args.js';
import { send, workspaceClient } from './api.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { confirm } from './confirm.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { printFields, printJson, time } from './output.js';
import type { components } from '@workspace-platform/sdk';

type ChangeRequest = components['schemas']['RepositoryChangeRequest'];
type DiffFile = components['schemas']['RepositoryChangeRequestDiff']['files'][number];

const STATES = ['open', 'merged', 'closed', 'superseded'] as const;

function printChange(ctx: CommandContext, c: ChangeRequest, said?: string): void {
  if (ctx.json) return printJson(ctx.io, c);
  if (said) ctx.io.err.write(`${said}\n`);
  printFields(ctx.io, [
    ['id', c.id],
    ['number', `#${c.number} (${c.ref})`],
    ['title', c.title],
    ['state', c.state],
    ['install', c.install_id],
    ['render', c.render_id],
    ['author', c.author_id ?? 'automatic update'],
    ['mergeable', c.mergeable ? 'yes' : `no: ${c.merge_blockers.map((b) => (b === 'approvals_required' ? 'needs approvals' : 'not open')).join(', ')}`],
    ['approvals', c.approvals.length === 0 ? '-' : c.approvals.map((a) => a.user_id).join(', ')],
    ['changes', `${c.diff_stats.added} added, ${c.diff_stats.modified} modified, ${c.diff_stats.removed} removed`],
    ['base', c.base_commit_sha],
    ['head', c.head_commit_sha],
    ['merged', c.merged_at ? `${time(c.merged_at)} by ${c.merged_by}` : '-'],
    ['closed', c.closed_at ? time(c.closed_at) : '-'],
    ['description', c.description || '-'],
  ]);
}

/** Beyond this many lines on a side, a file is said to have changed, not compared line by line. */
const MAX_LINES = 2000;
const CONTEXT = 3;

/** A file's change as git's unified diff shows it: the longest common subsequence of the lines, with three lines of context. */
export function unifiedDiff(f: DiffFile): string {
  const a = f.status === 'added' ? '/dev/null' : `a/${f.path}`;
  const b = f.status === 'removed' ? '/dev/null' : `b/${f.path}`;
  const head = `diff --git a/${f.path} b/${f.path}\n${f.status === 'added' ? 'new file\n' : f.status === 'removed' ? 'deleted file\n' : ''}--- ${a}\n+++ ${b}\n`;
  if ((f.before === null && f.status !== 'added') || (f.after === null && f.status !== 'removed')) return `${head}Binary files differ\n`;
  const split = (t: string | null) => (t === null || t === '' ? [] : t.replace(/\n$/, '').split('\n'));
  const x = split(f.before);
  const y = split(f.after);
  if (x.length > MAX_LINES || y.length > MAX_LINES) return `${head}(too long to compare line by line)\n`;
  const common = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) common[i]![j] = x[i] === y[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
  const lines: { kind: ' ' | '-' | '+'; text: string; ai: number; bi: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) lines.push({ kind: ' ', text: x[i++]!, ai: i, bi: ++j });
    else if (j >= y.length || (i < x.length && common[i + 1]![j]! >= common[i]![j + 1]!)) lines.push({ kind: '-', text: x[i++]!, ai: i, bi: j });
    else lines.push({ kind: '+', text: y[j++]!, ai: i, bi: j });
  }
  const near = lines.map((_, k) => lines.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((l) => l.kind !== ' '));
  let out = head;
  for (let k = 0; k < lines.length;) {
    if (!near[k]) {
      k++;
      continue;
    }
    let end = k;
    while (end < lines.length && near[end]) end++;
    const hunk = lines.slice(k, end);
    const oldCount = hunk.filter((l) => l.kind !== '+').length;
    const newCount = hunk.filter((l) => l.kind !== '-').length;
    const first = hunk[0]!;
    const oldStart = first.kind === '+' ? first.ai : first.ai - 1 + (oldCount === 0 ? 1 : 0);
    const newStart = first.kind === '-' ? first.bi : first.bi - 1 + (newCount === 0 ? 1 : 0);
    out += `@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${newCount === 0 ? newStart : newStart + 1},${newCount} @@\n`;
    for (const l of hunk) out += `${l.kind}${l.text}\n`;
    k = end;
  }
  return out;
}

/** A write with the change request's etag as If-Match, read just before. */
async function act(ctx: CommandContext, verb: 'approve' | 'merge' | 'close' | 'reopen', said: string, body?: { head_commit_sha?: string }) {
  const id = idArg(ctx, 0, 'the change request id', 'rcr');
  noMoreArgs(ctx, 1);
  const { c, api } = workspaceClient(ctx);
  const current = await send(c.server, api.GET('/v1/repository_change_requests/{id}', { params: { path: { id } } }));
  const header = { 'if-match': current.etag };
  const path = { id };
  const done = await send(
    c.server,
    verb === 'approve'
      ? api.POST('/v1/repository_change_requests/{id}:approve', { params: { path, header } })
      : verb === 'merge'
        ? api.POST('/v1/repository_change_requests/{id}:merge', { params: { path, header }, body: body ?? {} })
        : verb === 'close'
          ? api.POST('/v1/repository_change_requests/{id}:close', { params: { path, header } })
          : api.POST('/v1/repository_change_requests/{id}:reopen', { params: { path, header } }),
  );
  printChange(ctx, done, `${said} change request #${done.number} (${done.id}).`);
}

export const changesList: Command = {
  name: 'changes list',
  usage: `[--install inst_ID] [--state open|merged|closed|superseded] ${listUsage(100)}`,
  summary: "the workspace's repository change requests, newest first: renders waiting for review",
  flags: ['install', 'state', ...LIST_FLAGS],
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const install = stringFlag(ctx.args, 'install');
    const state = stringFlag(ctx.args, 'state');
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw new UsageError(`--state must be one of ${STATES.join(', ')}, got "${state}"`);
    const { c, api } = workspaceClient(ctx);
    const filters = { ...(install ? { install_id: install } : {}), ...(state ? { state: state as (typeof STATES)[number] } : {}) };
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/repository_change_requests', { params: { query: { ...query, ...filters } } }));
    printListed(
      ctx,
      page,
      [
        ['id', (r) => r.id],
        ['#', (r) => r.number],
        ['install', (r) => r.install_id],
        ['state', (r) => r.state],
        ['mergeable', (r) => (r.mergeable ? 'yes' : r.merge_blockers.join(','))],
        ['approvals', (r) => r.approvals.length],
        ['title', (r) => r.title],
        ['created', (r) => time(r.created_at)],
      ],
      'No change requests.',
    );
  },
};

export const changesShow: Command = {
  name: 'changes show',
  usage: 'rcr_ID',
  summary: 'one change request: its state, whether it can be merged and why not, its approvals',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the change request id', 'rcr');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    printChange(ctx, await send(c.server, api.GET('/v1/repository_change_requests/{id}', { params: { path: { id } } })));
  },
};

export const changesDiff: Command = {
  name: 'changes diff',
  usage: 'rcr_ID',
  summary: 'what a change request changes: a unified diff (--json: every file with both sides)',
  details: 'The same change git shows with `git fetch origin refs/changes/<number> && git diff main FETCH_HEAD`.',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the change request id', 'rcr');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const diff = await send(c.server, api.GET('/v1/repository_change_requests/{id}/diff', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, diff);
    if (diff.files.length === 0) {
      ctx.io.err.write('No file changes.\n');
      return;
    }
    for (const f of diff.files) ctx.io.out.write(unifiedDiff(f));
  },
};

export const changesApprove: Command = {
  name: 'changes approve',
  usage: 'rcr_ID',
  summary: 'approve a change request (a person, never its author, never an API token)',
  run: (ctx) => act(ctx, 'approve', 'Approved'),
};

export const changesMerge: Command = {
  name: 'changes merge',
  usage: 'rcr_ID [--head SHA]',
  summary: "merge a change request: the install's main moves to its head (asks first, or --yes)",
  flags: ['head'],
  details: 'With --head, the merge is refused if the head is no longer that commit (what you reviewed). Reads the etag for If-Match.',
  async run(ctx) {
    const head = stringFlag(ctx.args, 'head');
    if (head !== undefined && !/^[0-9a-f]{40}$/.test(head)) throw new UsageError('--head must be a commit id: 40 lower-case hexadecimal digits');
    await confirm(ctx, `Merge change request ${ctx.args.positionals[0] ?? ''}`, "The install's main moves to its head and its render becomes the current version.", false);
    await act(ctx, 'merge', 'Merged', head ? { head_commit_sha: head } : {});
  },
};

export const changesClose: Command = {
  name: 'changes close',
  usage: 'rcr_ID',
  summary: 'close a change request unmerged: its render is canceled, main stays',
  run: (ctx) => act(ctx, 'close', 'Closed'),
};

export const changesReopen: Command = {
  name: 'changes reopen',
  usage: 'rcr_ID',
  summary: 'reopen a closed change request (while no newer render of its install exists)',
  run: (ctx) => act(ctx, 'reopen', 'Reopened'),
};

export const CHANGE_COMMANDS = [changesList, changesShow, changesDiff, changesApprove, changesMerge, changesClose, changesReopen];
