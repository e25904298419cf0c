import { CLI_CLIENT_ID } from '../../config.js';
import type { WspClient } from '@workspace-platform/sdk';
import { UsageError, stringFlag } from '../args.js';
import { apiAs, apiFor, send, unreachable } from './api.js';
import { noMoreArgs, type Command, type CommandContext } from './command.js';
import { DEFAULT_SERVER, deleteCredentials, readCredentials, requireCredentials, writeCredentials } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { printFields, printJson, Spinner } from './output.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** Consecutive polls that may fail to get an answer (a restarting server) before giving up. */
const MAX_POLL_FAILURES = 3;

function serverUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--server must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server must be an http(s) URL, got "${raw}"`);
  return url.toString().replace(/\/+$/, '');
}

type OAuthAnswer<D> = { data?: D; error?: { error?: string; error_description?: string }; response: Response };

async function oauth<D>(server: string, pending: Promise<OAuthAnswer<D>>): Promise<OAuthAnswer<D>> {
  try {
    return await pending;
  } catch (err) {
    throw unreachable(server, err);
  }
}

/** RFC 8628 §3.4-3.5 from the device's side: wait `interval`, poll, obey slow_down. */
async function pollForToken(ctx: CommandContext, api: WspClient, server: string, deviceCode: string, interval: number, expiresIn: number): Promise<string> {
  const deadline = Date.now() + expiresIn * 1000;
  const spinner = Spinner.for(ctx.io, ctx.json);
  spinner.start('Waiting for approval in the browser…');
  let failures = 0;
  try {
    for (;;) {
      await ctx.io.sleep(interval * 1000);
      if (Date.now() >= deadline) throw new CliError('the code expired before anyone approved it; run `wsp login` again', EXIT.FAILED);
      let answer;
      try {
        answer = await oauth(server, api.POST('/v1/oauth/token', { body: { grant_type: GRANT, client_id: CLI_CLIENT_ID, device_code: deviceCode } }));
      } catch (err) {
        if (++failures >= MAX_POLL_FAILURES) throw err;
        continue;
      }
      if (answer.data) return answer.data.access_token;
      if (answer.response.status >= 500) {
        if (++failures >= MAX_POLL_FAILURES) throw new CliError(`the server failed ${failures} times in a row (${answer.response.status})`, EXIT.FAILED);
        continue;
      }
      failures = 0;
      switch (answer.error?.error) {
        case 'authorization_pending':
          continue;
        case 'slow_down':
          interval += 5;
          continue;
        case 'access_denied':
          throw new CliError('the login was denied in the browser', EXIT.FAILED);
        case 'expired_token':
          throw new CliError('the code expired before anyone approved it; run `wsp login` again', EXIT.FAILED);
        default:
          throw new CliError(`login failed: ${answer.error?.error ?? answer.response.status}${answer.error?.error_description ? `: ${answer.error.error_description}` : ''}`, EXIT.FAILED);
      }
    }
  } finally {
    spinner.stop();
  }
}

export const login: Command = {
  name: 'login',
  usage: '[--server URL]',
  summary: 'sign in with the device flow: shows a code to approve in a browser, then waits',
  flags: ['server'],
  details: `The server is --server, else $WSP_SERVER, else the last one logged in to, else ${DEFAULT_SERVER}.
Nothing is opened for you: open the URL shown (on any device), sign in, and enter the code.
The code and URL go to stderr; the result (with --json, one JSON object) to stdout.`,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const previous = readCredentials(ctx.io.env);
    const server = serverUrl(stringFlag(ctx.args, 'server') ?? ctx.io.env.WSP_SERVER ?? previous?.server ?? DEFAULT_SERVER);
    const api = apiFor(server);
    const started = await oauth(server, api.POST('/v1/oauth/device_authorization', { body: { client_id: CLI_CLIENT_ID } }));
    if (!started.data) {
      const why = started.error?.error_description ?? started.error?.error ?? `status ${started.response.status}`;
      throw new CliError(`the server at ${server} refused to start a login: ${why}`, EXIT.FAILED);
    }
    const d = started.data;
    ctx.io.err.write(
      `To sign in, open ${d.verification_uri}\nand enter the code: ${d.user_code}\n(or open ${d.verification_uri_complete})\nThe code expires in ${Math.round(d.expires_in / 60)} minutes.\n`,
    );
    const token = await pollForToken(ctx, api, server, d.device_code, d.interval, d.expires_in);

    const authed = apiFor(server, token);
    const me = await send(server, authed.GET('/v1/me'));
    const workspaces = await send(server, authed.GET('/v1/workspaces'));
    const workspace = workspaces.data.length === 1 ? workspaces.data[0]!.id : null;
    const file = writeCredentials({ server, token, user_id: me.user!.id, workspace }, ctx.io.env);
    // The session this login replaces is of no more use: best effort, the new one is saved.
    if (previous && previous.server === server && previous.token !== token) {
      await apiAs(previous)
        .DELETE('/v1/sessions/current')
        .catch(() => undefined);
    }
    if (ctx.json) return printJson(ctx.io, { server, user_id: me.user!.id, workspace, credentials_file: file });
    ctx.io.out.write(`Logged in to ${server} as ${me.user!.name ?? me.user!.id} (${me.user!.id}).\n`);
    ctx.io.out.write(workspace ? `Acting in workspace ${workspace}.\n` : `You belong to ${workspaces.data.length} workspaces: choose one with \`wsp workspace use ws_...\`.\n`);
  },
};

export const logout: Command = {
  name: 'logout',
  usage: '',
  summary: 'revoke this session on the server and forget it here',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = readCredentials(ctx.io.env);
    if (!c) {
      if (ctx.json) return printJson(ctx.io, { logged_out: false });
      ctx.io.out.write('Not logged in.\n');
      return;
    }
    let revoked = true;
    try {
      const res = await apiAs(c).DELETE('/v1/sessions/current');
      // 401: the session was already gone; anything else is the server's problem to report.
      if (!res.response.ok && res.response.status !== 401) revoked = false;
    } catch {
      revoked = false;
    }
    deleteCredentials(ctx.io.env);
    if (!revoked) throw new CliError(`forgot the login here, but could not revoke it on ${c.server}: it stays valid until it expires`, EXIT.UNREACHABLE);
    if (ctx.json) return printJson(ctx.io, { logged_out: true, server: c.server });
    ctx.io.out.write(`Logged out of ${c.server}.\n`);
  },
};

export const whoami: Command = {
  name: 'whoami',
  usage: '',
  summary: 'who you are logged in as, where, and in which workspace',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireCredentials(ctx.io.env);
    const me = await send(c.server, apiAs(c).GET('/v1/me'));
    if (ctx.json) return printJson(ctx.io, { server: c.server, ...me });
    printFields(ctx.io, [
      ['server', c.server],
      ['user', me.user ? `${me.user.name ?? '-'} (${me.user.id})` : '-'],
      ['email', me.user?.email],
      ['workspace', me.workspace ? `${me.workspace.name} (${me.workspace.id})` : 'none (wsp workspace use ws_...)'],
      ['role', me.role],
    ]);
  },
};
