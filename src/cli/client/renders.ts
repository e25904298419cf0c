import { stringFlag } from '../args.js';
import { apiAs, send } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { printJson, printTable } from './output.js';

export const rendersFiles: Command = {
  name: 'renders files',
  usage: 'rnd_ID [--path PATH]',
  summary: "the files of a render's commit; --path prints one file's content",
  flags: ['path'],
  async run(ctx) {
    const id = idArg(ctx, 0, 'the render id', 'rnd');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const tree = await send(c.server, apiAs(c).GET('/v1/renders/{id}/files', { params: { path: { id } } }));
    const path = stringFlag(ctx.args, 'path');
    if (path !== undefined) {
      const file = tree.files.find((f) => f.path === path);
      if (!file) throw new CliError(`the commit ${tree.commit_sha.slice(0, 10)} has no file ${path}`, EXIT.FAILED);
      if (ctx.json) return printJson(ctx.io, file);
      if (file.content === null) throw new CliError(`${path} is not text (${file.size} bytes)`, EXIT.FAILED);
      ctx.io.out.write(file.content);
      return;
    }
    if (ctx.json) return printJson(ctx.io, tree);
    printTable(
      ctx.io,
      tree.files,
      [
        ['path', (f) => f.path],
        ['bytes', (f) => String(f.size)],
      ],
      'No files.',
    );
  },
};
