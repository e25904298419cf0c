import type { Schemas } from '@workspace-platform/sdk';
import { diffLines } from './rendered-diff.js';

type DiffFile = Schemas['RepositoryChangeRequestDiff']['files'][number];

interface Side {
  n: number;
  text: string;
}

/** One row of a side-by-side diff: a line kept (both sides), changed (either side or both), or kept lines left out. */
export type Row = { kind: 'same' | 'change'; left?: Side; right?: Side } | { kind: 'gap'; hidden: number };

/** Lines kept around a change; the rest of a long unchanged stretch is one row that says how many. */
const CONTEXT = 3;

/** A file's lines; the newline that ends the last one starts no line of its own. */
const linesOf = (text: string) => (text.endsWith('\n') ? text.slice(0, -1) : text);

/**
 * `before` and `after` as rows of two columns, the way a review reads them: a removed line and the
 * line added in its place side by side, unchanged lines on both sides, long unchanged stretches
 * folded. Null when a side is too long to compare line by line (diffLines' bound).
 */
export function sideBySide(before: string, after: string): Row[] | null {
  const lines = diffLines(linesOf(before), linesOf(after));
  if (lines === null) return null;
  const rows: { kind: 'same' | 'change'; left?: Side; right?: Side }[] = [];
  let ln = 1;
  let rn = 1;
  for (let i = 0; i < lines.length;) {
    if (lines[i].kind === ' ') {
      rows.push({ kind: 'same', left: { n: ln++, text: lines[i].text }, right: { n: rn++, text: lines[i].text } });
      i++;
      continue;
    }
    // A run of removals and additions: paired line by line, the longer side going on alone.
    const removed: Side[] = [];
    const added: Side[] = [];
    for (; i < lines.length && lines[i].kind !== ' '; i++) {
      if (lines[i].kind === '-') removed.push({ n: ln++, text: lines[i].text });
      else added.push({ n: rn++, text: lines[i].text });
    }
    for (let k = 0; k < Math.max(removed.length, added.length); k++) rows.push({ kind: 'change', ...(removed[k] ? { left: removed[k] } : {}), ...(added[k] ? { right: added[k] } : {}) });
  }
  const near = rows.map((_, k) => rows.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((r) => r.kind === 'change'));
  const out: Row[] = [];
  for (let k = 0; k < rows.length; k++) {
    if (near[k]) out.push(rows[k]);
    else if (out[out.length - 1]?.kind === 'gap') (out[out.length - 1] as { hidden: number }).hidden++;
    else out.push({ kind: 'gap', hidden: 1 });
  }
  return out;
}

const STATUS_WORDS: Record<DiffFile['status'], string> = { added: 'added', modified: 'modified', removed: 'removed' };

/** Why a side has no text: the file is not there, or its bytes are not UTF-8 text. */
function missingSide(file: DiffFile, side: 'before' | 'after'): string {
  if (side === 'before' && file.status === 'added') return 'absent: the file is new';
  if (side === 'after' && file.status === 'removed') return 'absent: the file is removed';
  return 'not text (binary, or not UTF-8): not shown';
}

/** One side's cells of a row: its line number and its text, marked when the line changed. */
function Cells({ side, changed, kind }: { side: Side | undefined; changed: boolean; kind: 'del' | 'ins' }) {
  if (!side) return <td colSpan={2} class="none" />;
  return (
    <>
      <td class="ln">{side.n}</td>
      <td class={changed ? kind : undefined}>{side.text}</td>
    </>
  );
}

/** A side without text in a row: why, once, beside all the lines of the other side. */
function Missing({ why, rows }: { why: string; rows: number }) {
  return (
    <td colSpan={2} rowSpan={rows} class="absent">
      {why}
    </td>
  );
}

/** The rows of a file one of whose sides has no text (absent, or not UTF-8): the other side whole. */
function OneSided({ file }: { file: DiffFile }) {
  const shown = file.after ?? file.before;
  const lines = shown === null || shown === '' ? [] : linesOf(shown).split('\n');
  const left = file.before === null ? missingSide(file, 'before') : '(empty)';
  const right = file.after === null ? missingSide(file, 'after') : '(empty)';
  if (lines.length === 0)
    return (
      <tr>
        <Missing why={left} rows={1} />
        <Missing why={right} rows={1} />
      </tr>
    );
  return (
    <>
      {lines.map((text, k) => (
        <tr key={k}>
          {file.before === null ? k === 0 && <Missing why={left} rows={lines.length} /> : <Cells side={{ n: k + 1, text }} changed kind="del" />}
          {file.after === null ? k === 0 && <Missing why={right} rows={lines.length} /> : <Cells side={{ n: k + 1, text }} changed kind="ins" />}
        </tr>
      ))}
    </>
  );
}

/** One file of a change request's diff: the base's text on the left, the head's on the right. */
function FileDiff({ file }: { file: DiffFile }) {
  const rows = file.before !== null && file.after !== null ? sideBySide(file.before, file.after) : undefined;
  return (
    <section class="file-diff" aria-label={`${file.path} (${file.status})`}>
      <h3>
        <code>{file.path}</code> <span class="muted">{STATUS_WORDS[file.status]}</span>
      </h3>
      {rows === null ? (
        <p class="muted">Too long to compare line by line.</p>
      ) : (
        <div class="table-wrap">
          <table class="side-by-side" aria-label={`${file.path}: before and after`}>
            <colgroup>
              <col class="ln" />
              <col />
              <col class="ln" />
              <col />
            </colgroup>
            <thead>
              <tr>
                <th scope="col" colSpan={2}>
                  Before (main)
                </th>
                <th scope="col" colSpan={2}>
                  After (this change)
                </th>
              </tr>
            </thead>
            <tbody>
              {rows === undefined ? (
                <OneSided file={file} />
              ) : (
                rows.map((r, k) =>
                  r.kind === 'gap' ? (
                    <tr key={k} class="gap">
                      <td colSpan={4}>
                        ⋯ {r.hidden} unchanged {r.hidden === 1 ? 'line' : 'lines'}
                      </td>
                    </tr>
                  ) : (
                    <tr key={k}>
                      <Cells side={r.left} changed={r.kind === 'change'} kind="del" />
                      <Cells side={r.right} changed={r.kind === 'change'} kind="ins" />
                    </tr>
                  ),
                )
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A change request's files, each side by side, in the API's path order. */
export function ChangeDiff({ files }: { files: DiffFile[] }) {
  if (files.length === 0) return <p class="empty">This change request changes no file.</p>;
  return (
    <div class="change-diff" role="group" aria-label="Files changed">
      {files.map((f) => (
        <FileDiff key={f.path} file={f} />
      ))}
    </div>
  );
}
