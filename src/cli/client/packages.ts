import fs from 'node:fs';
import { stringFlag, UsageError } from '../args.js';
import { apiAs, send } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { printJson } from './output.js';

/** The values of --values FILE (a JSON object), or none. */
function readValues(file: string | undefined): Record<string, unknown> {
  if (file === undefined) return {};
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.FAILED);
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--values ${file} is not JSON: ${(err as Error).message}`);
  }
  if (values === null || typeof values !== 'object' || Array.isArray(values)) throw new UsageError(`--values ${file} must hold a JSON object of template values`);
  return values as Record<string, unknown>;
}

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
    const values = readValues(stringFlag(ctx.args, 'values'));
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const preview = await send(
      c.server,
      apiAs(c).POST('/v1/packages/{id}/versions/{version_id}:preview', { params: { path: { id, version_id: versionId } }, body: { values } }),
    );
    if (ctx.json) return printJson(ctx.io, preview);
    const paths = Object.keys(preview.files).sort();
    if (paths.length === 0) ctx.io.out.write('No files.\n');
    for (const path of paths) {
      const text = preview.files[path]!;
      ctx.io.out.write(`==> ${path} <==\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`);
    }
  },
};
