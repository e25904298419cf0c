import fs from 'node:fs';
import path from 'node:path';
import { stringFlag, UsageError } from '../args.js';
import { apiAs, send, workspaceClient } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { readJsonObject } from './input.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { printFields, printJson, printTable, time } from './output.js';
import { deleteCommand } from './deletes.js';

export const packagesList: Command = {
  name: 'packages list',
  usage: listUsage(100),
  summary: "the workspace's packages",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/packages', { params: { query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (p) => p.id],
        ['name', (p) => p.name],
        ['created', (p) => time(p.created_at)],
      ],
      'No packages.',
    );
  },
};

export const packagesGet: Command = {
  name: 'packages get',
  usage: 'pkg_ID',
  summary: 'one package',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the package id', 'pkg');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const p = await send(c.server, api.GET('/v1/packages/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, p);
    printFields(ctx.io, [
      ['id', p.id],
      ['name', p.name],
      ['created', time(p.created_at)],
    ]);
  },
};

export const packagesCreate: Command = {
  name: 'packages create',
  usage: '--name NAME',
  summary: 'make a package (then `wsp packages publish` its versions)',
  flags: ['name'],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const name = stringFlag(ctx.args, 'name', true);
    const { c, api } = workspaceClient(ctx);
    const p = await send(c.server, api.POST('/v1/packages', { body: { name } }));
    if (ctx.json) return printJson(ctx.io, p);
    ctx.io.out.write(`Created package ${p.name} (${p.id}).\n`);
  },
};

export const packagesVersions: Command = {
  name: 'packages versions',
  usage: `pkg_ID ${listUsage(100)}`,
  summary: "a package's versions, newest first",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the package id', 'pkg');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/packages/{id}/versions', { params: { path: { id }, query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (v) => v.id],
        ['version', (v) => v.semver],
        ['created', (v) => time(v.created_at)],
      ],
      'No versions.',
    );
  },
};

export const packagesVersion: Command = {
  name: 'packages version',
  usage: 'pkg_ID pkgv_ID [--path PATH]',
  summary: 'one version: its template files (--path prints one template)',
  flags: ['path'],
  async run(ctx) {
    const id = idArg(ctx, 0, 'the package id', 'pkg');
    const versionId = idArg(ctx, 1, 'the version id', 'pkgv');
    noMoreArgs(ctx, 2);
    const { c, api } = workspaceClient(ctx);
    const v = await send(c.server, api.GET('/v1/packages/{id}/versions/{version_id}', { params: { path: { id, version_id: versionId } } }));
    const only = stringFlag(ctx.args, 'path');
    if (only !== undefined) {
      const text = v.files[only];
      if (text === undefined) throw new CliError(`version ${v.semver} has no file ${only}`, EXIT.FAILED);
      if (ctx.json) return printJson(ctx.io, { path: only, template: text });
      ctx.io.out.write(text);
      return;
    }
    if (ctx.json) return printJson(ctx.io, v);
    printFields(ctx.io, [
      ['id', v.id],
      ['version', v.semver],
      ['created', time(v.created_at)],
    ]);
    ctx.io.out.write('\n');
    printTable(
      ctx.io,
      Object.entries(v.files).sort(([a], [b]) => a.localeCompare(b)),
      [
        ['path', ([p]) => p],
        ['bytes', ([, t]) => Buffer.byteLength(t)],
      ],
      'No files.',
    );
  },
};

/** Every file under `dir` by its path relative to it (`/`-separated), as text; `.git` is skipped. */
function templatesIn(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const e of fs.readdirSync(at, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) files[path.relative(dir, full).split(path.sep).join('/')] = fs.readFileSync(full, 'utf8');
    }
  };
  try {
    walk(dir);
  } catch (err) {
    throw new CliError(`cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.FAILED);
  }
  return files;
}

export const packagesPublish: Command = {
  name: 'packages publish',
  usage: 'pkg_ID --semver 1.2.0 --dir DIR',
  summary: 'publish a version of a package: every file under DIR is a Mustache template',
  flags: ['semver', 'dir'],
  details: 'Files are sent by their path relative to DIR (.git is left out); the server checks each template and refuses the version if one does not parse (exit 1, naming the file).',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the package id', 'pkg');
    noMoreArgs(ctx, 1);
    const semver = stringFlag(ctx.args, 'semver', true);
    const files = templatesIn(stringFlag(ctx.args, 'dir', true));
    if (Object.keys(files).length === 0) throw new UsageError('--dir holds no files');
    const { c, api } = workspaceClient(ctx);
    const v = await send(c.server, api.POST('/v1/packages/{id}/versions', { params: { path: { id } }, body: { semver, files } }));
    if (ctx.json) return printJson(ctx.io, v);
    ctx.io.out.write(`Published ${v.semver} (${v.id}) with ${Object.keys(v.files).length} files.\n`);
  },
};

export const packagesPreview: Command = {
  name: 'packages preview',
  usage: 'pkg_ID pkgv_ID [--values FILE]',
  summary: "render a package version's templates with values, writing nothing",
  flags: ['values'],
  details: `--values FILE is a JSON object of template values ("-": stdin). Prints each rendered file under a "==> path <==" line (--json: {files}).
A value a template needs and the values lack is an error naming the file and the value (exit 1).`,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the package id', 'pkg');
    const versionId = idArg(ctx, 1, 'the version id', 'pkgv');
    noMoreArgs(ctx, 2);
    const valuesFile = stringFlag(ctx.args, 'values');
    const values = valuesFile === undefined ? {} : await readJsonObject(ctx.io, 'values', valuesFile);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const preview = await send(c.server, apiAs(c).POST('/v1/packages/{id}/versions/{version_id}:preview', { params: { path: { id, version_id: versionId } }, body: { values } }));
    if (ctx.json) return printJson(ctx.io, preview);
    const paths = Object.keys(preview.files).sort();
    if (paths.length === 0) ctx.io.out.write('No files.\n');
    for (const path of paths) {
      const text = preview.files[path]!;
      ctx.io.out.write(`==> ${path} <==\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`);
    }
  },
};

export const packagesDelete = deleteCommand({
  name: 'packages delete',
  summary: 'delete a package and its versions (refused while installs use it)',
  noun: 'package',
  prefix: 'pkg',
  path: '/v1/packages/{id}',
  consequence: 'Its versions go with it. While installs use it, it is refused and they are named.',
});

export const PACKAGE_COMMANDS = [packagesList, packagesGet, packagesCreate, packagesVersions, packagesVersion, packagesPublish, packagesPreview, packagesDelete];
