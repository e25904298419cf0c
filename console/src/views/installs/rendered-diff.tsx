/** One line of a file's diff: kept, removed (the old side only) or added (the new side only). */
export interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
}

/** Beyond this many lines on a side, a file is said to have changed, not compared line by line. */
const MAX_LINES = 2000;

/**
 * The lines of `before` and `after` as a unified diff, by the longest common subsequence: what a
 * rendered file loses and gains. Quadratic in the lines, which MAX_LINES bounds.
 */
export function diffLines(before: string, after: string): DiffLine[] | null {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > MAX_LINES || b.length > MAX_LINES) return null;
  // common[i][j]: the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', text: a[i++] });
      j++;
    } else if (common[i + 1][j] >= common[i][j + 1]) out.push({ kind: '-', text: a[i++] });
    else out.push({ kind: '+', text: b[j++] });
  }
  while (i < a.length) out.push({ kind: '-', text: a[i++] });
  while (j < b.length) out.push({ kind: '+', text: b[j++] });
  return out;
}

/** What a render would change in the repository: each file added, removed or changed, by path. */
export function RenderedDiff({ before, after }: { before: Record<string, string>; after: Record<string, string> }) {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changed = paths.filter((p) => before[p] !== after[p]);
  if (changed.length === 0) return <p class="empty">The render would change no file: the repository stays as it is.</p>;
  return (
    <div class="rendered-diff" role="group" aria-label="What the render would change">
      <p>
        {changed.length} of {paths.length} {paths.length === 1 ? 'file' : 'files'} would change.
      </p>
      {changed.map((p) => {
        const state = !(p in before) ? 'added' : !(p in after) ? 'removed' : 'changed';
        const lines = diffLines(before[p] ?? '', after[p] ?? '');
        return (
          <section key={p} aria-label={`${p} (${state})`}>
            <h3>
              <code>{p}</code> <span class="muted">{state}</span>
            </h3>
            {lines === null ? (
              <p class="muted">Too long to compare line by line.</p>
            ) : (
              <pre class="source diff">
                {lines
                  .filter((l, k) => l.kind !== ' ' || lines.slice(Math.max(0, k - 2), k + 3).some((n) => n.kind !== ' '))
                  .map((l, k) => (
                    <span key={k} class={l.kind === '+' ? 'added' : l.kind === '-' ? 'removed' : ''}>
                      {`${l.kind} ${l.text}\n`}
                    </span>
                  ))}
              </pre>
            )}
          </section>
        );
      })}
    </div>
  );
}
