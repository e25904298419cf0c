import { stringFlag } from '../args.js';
import { apiAs, send } from './api.js';
import { durationOption, timeOption } from './durations.js';
import { arg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { printJson, printTable, time } from './output.js';

export const metricsList: Command = {
  name: 'metrics list',
  usage: '',
  summary: 'the platform metrics a dashboard widget can draw',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const list = await send(c.server, apiAs(c).GET('/v1/platform_metrics', {}));
    if (ctx.json) return printJson(ctx.io, list);
    printTable(
      ctx.io,
      list.data,
      [
        ['key', (m) => m.key],
        ['version', (m) => String(m.version)],
        ['kind', (m) => m.kind],
        ['unit', (m) => m.unit],
        ['filters', (m) => m.filter_keys.join(',') || '-'],
        ['title', (m) => m.title],
      ],
      'No metrics.',
    );
  },
};

const FILTERS = ['cluster', 'install', 'status', 'type'] as const;

export const metricsSeries: Command = {
  name: 'metrics series',
  usage: 'KEY [--from 7d|2026-11-01|UNIX] [--to TIME] [--step 1h] [--cluster cl_ID] [--install inst_ID] [--status STATE] [--type EVENT]',
  summary: "a platform metric's points (default: the last day in about 96 points)",
  flags: ['from', 'to', 'step', ...FILTERS],
  async run(ctx) {
    const key = arg(ctx, 0, 'the metric key (wsp metrics list)');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const now = Math.floor(Date.now() / 1000);
    const from = timeOption(ctx.args.flags, 'from', now);
    const to = timeOption(ctx.args.flags, 'to', now);
    const step = ctx.args.flags.step === undefined ? undefined : durationOption(ctx.args.flags, 'step', 0, { min: 1, max: 31_536_000 });
    const filters = Object.fromEntries(FILTERS.map((f) => [f, stringFlag(ctx.args, f)]).filter(([, v]) => v !== undefined));
    const query = { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}), ...(step !== undefined ? { step } : {}), ...filters };
    const series = await send(c.server, apiAs(c).GET('/v1/platform_metrics/{key}/series', { params: { path: { key }, query } }));
    if (ctx.json) return printJson(ctx.io, series);
    printTable(
      ctx.io,
      series.points,
      [
        ['time', (p) => time(p[0])],
        [series.unit, (p) => String(p[1])],
      ],
      'No points.',
    );
  },
};
