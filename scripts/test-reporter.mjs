// A node:test reporter for scripts/test.mjs, beside the spec reporter people read: one JSON
// document with the file's counts (node's own summary) and every skipped or todo test, so the
// runner can add up a run and fail on a skip nobody decided on. While the file runs it also keeps,
// in WSP_TEST_PROGRESS, the tests under way: a file the runner kills for its time is reported with
// the test it was in, not only with the output of those that had ended.
import fs from 'node:fs';

const COUNTS = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/;

export default async function* runReport(source) {
  const counts = {};
  const skipped = [];
  const progress = process.env.WSP_TEST_PROGRESS;
  /** The tests dequeued and not yet complete, outermost first (a describe and the test in it). */
  const running = [];
  let lastDone = null;
  for await (const event of source) {
    const { data } = event;
    if (progress && (event.type === 'test:dequeue' || event.type === 'test:complete')) {
      if (event.type === 'test:dequeue') running.push({ name: data.name, nesting: data.nesting, since: Date.now() });
      else {
        const at = running.findLastIndex((r) => r.name === data.name && r.nesting === data.nesting);
        if (at >= 0) running.splice(at, 1);
        lastDone = data.name;
      }
      // Written at once (a killed process writes nothing later); a few hundred small writes a file.
      try {
        fs.writeFileSync(progress, JSON.stringify({ running, lastDone }));
      } catch {
        // the runner's report folder is gone: it no longer asks
      }
    }
    if ((event.type === 'test:pass' || event.type === 'test:fail') && (data.skip !== undefined || data.todo !== undefined)) {
      skipped.push({ name: data.name, reason: String(data.skip ?? data.todo ?? '') });
    }
    // The summary node prints at the end ("tests 12", "pass 12", ...) arrives as diagnostics.
    if (event.type === 'test:diagnostic' && data.nesting === 0) {
      const m = COUNTS.exec(data.message);
      if (m) counts[m[1]] = Number(m[2]);
    }
  }
  // This process's CPU (the reporter runs in the test file's process): what a file costs the
  // machine, apart from the processes it starts; and with them (servers, git, tsc, browsers),
  // those it has waited for, where Linux says (/proc/self/stat: utime, stime, cutime, cstime).
  const { user, system } = process.cpuUsage();
  yield `${JSON.stringify({ counts, skipped, cpuMs: Math.round((user + system) / 1000), treeCpuMs: treeCpuMs() })}\n`;
}

function treeCpuMs() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command's closing parenthesis: utime is the 14th field of the line, the 12th after it.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return Math.round((ticks * 1000) / 100);
  } catch {
    return undefined;
  }
}
