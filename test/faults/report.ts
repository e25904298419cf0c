import fs from 'node:fs';
import type { TestContext } from 'node:test';
import { ENGINE } from '../helpers/harness.js';

/**
 * One row of docs/reliability.md's fault table (issue 22): what was injected and how, what the
 * clients asked and were told, what was lost (always 0, asserted by the test before it reports),
 * the slowest answer while the fault lasted and how long the service took to answer normally
 * again once it ended.
 */
export interface FaultRow {
  fault: string;
  /** How the test injected it, in a few words ("pg_ctl restart -m immediate under 16 writers"). */
  injected: string;
  requests: number;
  /** Requests answered 2xx (the writes a client may rely on). */
  acknowledged: number;
  /** Acknowledged writes not found afterwards: the test asserts 0 before reporting. */
  lost: number;
  worstLatencyMs: number;
  /** From the end of the fault to the first normal answer; null where the fault has no end (a shutdown). */
  recoveryMs: number | null;
  /** Anything else the row needs (statuses seen, e.g. "503×41 (7054)"). */
  notes?: string;
}

/** True under `npm run faults` (the long runs); the short versions run in `npm test`. */
export const LONG = process.env.WSP_FAULTS_LONG === '1';

/**
 * Prints the row (a `ℹ fault-row {...}` line of the spec reporter) and, under `npm run faults`,
 * appends it to WSP_FAULTS_REPORT, from which scripts/faults.mjs prints the table.
 */
export function reportFault(t: TestContext, row: FaultRow): void {
  const full = { engine: ENGINE, long: LONG, ...row, worstLatencyMs: Math.round(row.worstLatencyMs), recoveryMs: row.recoveryMs === null ? null : Math.round(row.recoveryMs) };
  t.diagnostic(`fault-row ${JSON.stringify(full)}`);
  const file = process.env.WSP_FAULTS_REPORT;
  if (file) fs.appendFileSync(file, JSON.stringify(full) + '\n');
}

/** Latencies of a load's requests: the worst, and counts by status ("200×31 503×4"). */
export class LoadTally {
  requests = 0;
  acknowledged = 0;
  worstMs = 0;
  private readonly statuses = new Map<string, number>();

  record(status: number | string, ms: number, code?: number): void {
    this.requests++;
    if (typeof status === 'number' && status >= 200 && status < 300) this.acknowledged++;
    this.worstMs = Math.max(this.worstMs, ms);
    const key = code === undefined ? String(status) : `${status} (${code})`;
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
  }

  summary(): string {
    return [...this.statuses]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}×${n}`)
      .join(' ');
  }
}
