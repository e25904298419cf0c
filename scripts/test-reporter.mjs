// A node:test reporter for scripts/test.mjs, beside the spec reporter people read: one JSON
// document with the file's counts (node's own summary) and every skipped or todo test, so the
// runner can add up a run and fail on a skip nobody decided on.
const COUNTS = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/;

export default async function* runReport(source) {
  const counts = {};
  const skipped = [];
  for await (const event of source) {
    const { data } = event;
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
  // machine, apart from the processes it starts.
  const { user, system } = process.cpuUsage();
  yield `${JSON.stringify({ counts, skipped, cpuMs: Math.round((user + system) / 1000) })}\n`;
}
