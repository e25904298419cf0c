import fs from 'node:fs';
import { stringFlag, UsageError } from '../args.js';
import { send, workspaceClient } from './api.js';
import { confirm } from './confirm.js';
import { deleteCommand } from './deletes.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { arg, idArg, idOf, noMoreArgs, type Command } from './command.js';
import { writePrivateFile } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { printFields, printJson, time, type Io } from './output.js';

/** docs/spec-gaps.md, "Secrets": a payload is at most 64 KiB; reading stops just past that. */
const MAX_PAYLOAD = 65536;

async function readPayload(io: Io, file: string | undefined): Promise<Buffer> {
  if (file !== undefined && file !== '-') {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (err) {
      throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.FAILED);
    }
    try {
      const buf = Buffer.alloc(MAX_PAYLOAD + 1);
      let size = 0;
      for (let n; size < buf.length && (n = fs.readSync(fd, buf, size, buf.length - size, null)) > 0;) size += n;
      return buf.subarray(0, size);
    } finally {
      fs.closeSync(fd);
    }
  }
  if ((io.stdin as { isTTY?: boolean }).isTTY) throw new UsageError('give the payload with --file PATH, or pipe it on stdin');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(b);
    size += b.length;
    if (size > MAX_PAYLOAD) break;
  }
  return Buffer.concat(chunks);
}

const secretsGet: Command = {
  name: 'secrets get',
  usage: 'sec_ID',
  summary: 'one secret (never its payload: `wsp secrets access` reads that)',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the secret id', 'sec');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const secret = await send(c.server, api.GET('/v1/secrets/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, secret);
    printFields(ctx.io, [
      ['id', secret.id],
      ['name', secret.name],
      ['created', time(secret.created_at)],
      ['updated', time(secret.updated_at)],
    ]);
  },
};

const secretsDelete = deleteCommand({
  name: 'secrets delete',
  summary: 'delete a secret with every version of it',
  noun: 'secret',
  prefix: 'sec',
  path: '/v1/secrets/{id}',
  consequence: 'Every version of it is erased.',
});

const secretsCreate: Command = {
  name: 'secrets create',
  usage: '--name NAME',
  summary: 'create a secret (with no version yet)',
  flags: ['name'],
  details: 'Every create names its resource with --name; `secrets create NAME` is still accepted, as before.',
  async run(ctx) {
    // --name as every other create has it; the positional form of earlier releases still works.
    const flag = stringFlag(ctx.args, 'name');
    if (flag !== undefined && ctx.args.positionals.length > 0) throw new UsageError('give the name once: --name NAME');
    const name = flag ?? arg(ctx, 0, 'the secret name (--name NAME)');
    noMoreArgs(ctx, flag === undefined ? 1 : 0);
    const { c, api } = workspaceClient(ctx);
    const secret = await send(c.server, api.POST('/v1/secrets', { body: { name } }));
    if (ctx.json) return printJson(ctx.io, secret);
    ctx.io.out.write(`Created secret ${secret.name} (${secret.id}).\n`);
  },
};

const secretsList: Command = {
  name: 'secrets list',
  usage: `[--name NAME] ${listUsage(100)}`,
  summary: "the workspace's secrets (--name: the one with exactly that name)",
  flags: ['name', ...LIST_FLAGS],
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const name = stringFlag(ctx.args, 'name');
    const { c, api } = workspaceClient(ctx);
    const secrets = await listed(ctx, c.server, 100, (query) => api.GET('/v1/secrets', { params: { query: { ...query, ...(name !== undefined ? { name } : {}) } } }));
    printListed(
      ctx,
      secrets,
      [
        ['id', (s) => s.id],
        ['name', (s) => s.name],
        ['updated', (s) => time(s.updated_at)],
      ],
      'No secrets.',
    );
  },
};

const secretsVersions: Command = {
  name: 'secrets versions',
  usage: `sec_ID ${listUsage(100)}`,
  summary: "a secret's versions, newest first",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the secret id', 'sec');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const versions = await listed(ctx, c.server, 100, (query) => api.GET('/v1/secrets/{id}/versions', { params: { path: { id }, query } }));
    printListed(
      ctx,
      versions,
      [
        ['id', (v) => v.id],
        ['version', (v) => v.version_number],
        ['state', (v) => v.state],
        ['created', (v) => time(v.created_at)],
        ['comment', (v) => v.comment],
      ],
      'No versions.',
    );
  },
};

const secretsAddVersion: Command = {
  name: 'secrets add-version',
  usage: 'sec_ID [--file PATH | < stdin] [--comment TEXT]',
  summary: 'add a version whose payload is a file or stdin (at most 64 KiB)',
  flags: ['file', 'comment'],
  details: 'Without --file (or with --file -) the payload is read from stdin, byte for byte.',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the secret id', 'sec');
    noMoreArgs(ctx, 1);
    const comment = stringFlag(ctx.args, 'comment');
    const { c, api } = workspaceClient(ctx);
    const payload = await readPayload(ctx.io, stringFlag(ctx.args, 'file'));
    if (payload.length === 0) throw new CliError('the payload is empty', EXIT.FAILED);
    if (payload.length > MAX_PAYLOAD) throw new CliError('the payload is larger than 64 KiB (65,536 bytes)', EXIT.FAILED);
    const body = { data: payload.toString('base64'), ...(comment !== undefined ? { comment } : {}) };
    const version = await send(c.server, api.POST('/v1/secrets/{id}/versions', { params: { path: { id } }, body }));
    if (ctx.json) return printJson(ctx.io, version);
    ctx.io.out.write(`Added version ${version.version_number} (${version.id}) of ${version.secret_id}.\n`);
  },
};

const secretsAccess: Command = {
  name: 'secrets access',
  usage: 'sec_ID [secv_ID | latest] [--version secv_ID] [--output FILE]',
  summary: "print an enabled version's payload (raw bytes; --json: base64); default: the newest enabled",
  flags: ['output', 'version'],
  details:
    'Without a version id (or with `latest`) the newest enabled version is read; the version may be given as the second argument or as --version (not both). With --output the payload is written to FILE (mode 0600) instead of stdout.',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the secret id', 'sec');
    const flagged = stringFlag(ctx.args, 'version');
    if (flagged !== undefined && ctx.args.positionals[1] !== undefined) throw new UsageError('give the version once: as the second argument or as --version');
    const named = flagged ?? ctx.args.positionals[1];
    const vid = named === undefined || named === 'latest' ? 'latest' : flagged !== undefined ? idOf(flagged, 'the version id', 'secv') : idArg(ctx, 1, 'the version id', 'secv');
    noMoreArgs(ctx, 2);
    const output = stringFlag(ctx.args, 'output');
    const { c, api } = workspaceClient(ctx);
    const accessed = await send(c.server, api.GET('/v1/secrets/{id}/versions/{vid}:access', { params: { path: { id, vid } } }));
    if (ctx.json) return printJson(ctx.io, accessed);
    const bytes = Buffer.from(accessed.data, 'base64');
    if (output) {
      writePrivateFile(output, bytes);
      ctx.io.err.write(`Wrote ${bytes.length} bytes to ${output}.\n`);
      return;
    }
    ctx.io.out.write(bytes);
  },
};

/** enable, disable and destroy: read the version's etag, then change it under If-Match. */
function transition(action: 'enable' | 'disable' | 'destroy', summary: string): Command {
  return {
    name: `secrets ${action}`,
    usage: 'sec_ID secv_ID',
    summary,
    async run(ctx) {
      const id = idArg(ctx, 0, 'the secret id', 'sec');
      const vid = idArg(ctx, 1, 'the version id', 'secv');
      noMoreArgs(ctx, 2);
      const { c, api } = workspaceClient(ctx);
      if (action === 'destroy') await confirm(ctx, `Destroy version ${vid} of secret ${id}`, 'Its payload is erased.');
      const current = await send(c.server, api.GET('/v1/secrets/{id}/versions/{vid}', { params: { path: { id, vid } } }));
      const params = { path: { id, vid }, header: { 'if-match': current.etag } };
      const path = `/v1/secrets/{id}/versions/{vid}:${action}` as const;
      const version = await send(c.server, api.POST(path, { params }));
      if (ctx.json) return printJson(ctx.io, version);
      printFields(ctx.io, [
        ['version', `${version.version_number} (${version.id})`],
        ['state', version.state],
        ...(version.destroyed_at ? [['destroyed', time(version.destroyed_at)] as [string, string]] : []),
      ]);
    },
  };
}

export const secretCommands: Command[] = [
  secretsCreate,
  secretsList,
  secretsGet,
  secretsDelete,
  secretsVersions,
  secretsAddVersion,
  secretsAccess,
  transition('enable', 'enable a disabled version'),
  transition('disable', 'disable a version (access answers 409 until enabled)'),
  transition('destroy', 'destroy a version: its payload is wiped for good'),
];
