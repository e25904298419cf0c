import { useState } from 'preact/hooks';

/** Files by path: the list, and the one chosen shown below it. */
export function Files({ files, label }: { files: Record<string, string>; label: string }) {
  const paths = Object.keys(files).sort();
  const [open, setOpen] = useState<string | null>(null);
  const shown = open && open in files ? open : paths[0];
  if (paths.length === 0) return <p class="empty">No files.</p>;
  return (
    <div class="file-view" role="group" aria-label={label}>
      <ul class="files" aria-label={`${label}: paths`}>
        {paths.map((p) => (
          <li key={p}>
            <button type="button" class={p === shown ? 'link current' : 'link'} aria-pressed={p === shown} onClick={() => setOpen(p)}>
              {p}
            </button>
          </li>
        ))}
      </ul>
      {shown && (
        <pre class="source" aria-label={`Content of ${shown}`}>
          {files[shown]}
        </pre>
      )}
    </div>
  );
}
