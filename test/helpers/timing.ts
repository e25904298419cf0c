/**
 * Time that a busy machine does not stretch, for bounds on work done in this process.
 *
 * A bound on wall time (`performance.now()` before and after) also measures how long the
 * process waited for a core: beside other work on a 2-core machine, 100 ms of CPU can take a
 * second. The CPU this process used (every thread of it: render threads, SQLite, the garbage
 * collector) grows with what the code does, not with the load beside it: a bound meant to catch
 * work that explodes (a backtracking pattern, a check that grew quadratic) holds on it.
 */
export function cpuClock(): () => number {
  const started = process.cpuUsage();
  return () => {
    const { user, system } = process.cpuUsage(started);
    return (user + system) / 1000;
  };
}
