/** One line of the table `npm run bench` prints (bench/run.ts). */
export interface Row {
  scenario: string;
  engine: string;
  /** reference: the ceiling plus the read's one statement (bench/servers/ceiling-statement.mjs), PostgreSQL's cached reads. */
  variant: 'project' | 'ceiling' | 'floor' | 'reference';
  /** Requests a second, or what the scenario counts a second (restores, renders); NaN: none. */
  rps: number;
  p50: number;
  p99: number;
  rssMb: number;
  /** Socket errors plus answers of another status than expected (and, scale-out, lost writes). */
  errors: number;
  /** A figure the columns do not hold: a ratio to another row and its target, how it was counted. */
  note?: string;
}
