import fs from 'node:fs';
import pg from 'pg';
import type { Sample } from './soak-stats.js';

/**
 * What a server process holds, read from outside it: resident memory and open descriptors from
 * /proc (not from the process's own report, which a leak in its reporting could hide), database
 * connections from PostgreSQL's own view (the rows of the server's application_name) or, on
 * SQLite, the descriptors open on the database file and its -wal/-shm, and from /metrics the
 * event loop's delay (prom-client's histogram is reset by each scrape, so each sample's p99 covers
 * the time since the previous one) and the heap, as sampled and as retained after the latest
 * major collection.
 */
export class ProcessSampler {
  private pgClient: pg.Client | null = null;

  constructor(
    private readonly pid: number,
    private readonly base: string,
    private readonly db: { engine: 'postgres'; url: string; applicationName: string } | { engine: 'sqlite'; file: string },
  ) {}

  async open(): Promise<void> {
    if (this.db.engine === 'postgres') {
      this.pgClient = new pg.Client({ connectionString: this.db.url });
      await this.pgClient.connect();
    }
  }

  async close(): Promise<void> {
    await this.pgClient?.end();
  }

  async sample(t: number, requests: number): Promise<Sample> {
    const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
    const fdDir = `/proc/${this.pid}/fd`;
    const fds = fs.readdirSync(fdDir);
    let dbConnections: number;
    if (this.db.engine === 'postgres') {
      const { rows } = await this.pgClient!.query<{ n: string }>('select count(*) as n from pg_stat_activity where application_name = $1', [this.db.applicationName]);
      dbConnections = Number(rows[0]!.n);
    } else {
      const file = this.db.file;
      dbConnections = fds.filter((fd) => {
        try {
          return fs.readlinkSync(`${fdDir}/${fd}`).startsWith(file);
        } catch {
          return false; // closed between the listing and the look
        }
      }).length;
    }
    const metrics = await (await fetch(`${this.base}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    return {
      t,
      requests,
      rssMb: rssKb / 1024,
      heapMb: gauge('nodejs_heap_size_used_bytes') / 1024 / 1024,
      // 0 (or absent) until the server's first major collection.
      retainedHeapMb: gauge('wsp_heap_retained_bytes') / 1024 / 1024 || NaN,
      fds: fds.length,
      dbConnections,
      loopP99Ms: gauge('nodejs_eventloop_lag_p99_seconds') * 1000,
      loopMaxMs: gauge('nodejs_eventloop_lag_max_seconds') * 1000,
    };
  }
}
