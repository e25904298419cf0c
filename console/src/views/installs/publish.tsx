import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api.js';
import { Field, FormError, inputProps } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction } from '../../hooks.js';

/** What was chosen: each template by its path, and the files that cannot be one. */
interface Chosen {
  files: Record<string, string>;
  refused: string[];
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Files as a version's templates, by their path: a folder's files relative to the folder (as
 * `wsp packages publish --dir` sends them, `.git` left out), or loose files by their name. A file
 * that is not UTF-8 text cannot be a template: it is named, not sent.
 */
async function read(list: FileList, fromFolder: boolean): Promise<Chosen> {
  const chosen: Chosen = { files: {}, refused: [] };
  for (const file of Array.from(list)) {
    const relative = fromFolder && file.webkitRelativePath ? file.webkitRelativePath.split('/').slice(1).join('/') : file.name;
    if (relative === '' || relative.split('/').includes('.git')) continue;
    try {
      chosen.files[relative] = UTF8.decode(await file.arrayBuffer());
    } catch {
      chosen.refused.push(relative);
    }
  }
  return chosen;
}

/** The next patch version after the newest, as a starting point: 1.2.3 → 1.2.4. */
const nextPatch = (semver: string | undefined) => {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(semver ?? '');
  return m ? `${m[1]}.${m[2]}.${Number(m[3]) + 1}` : semver ? '' : '1.0.0';
};

/** Publishing a version from the browser: a folder (or files) uploaded as its templates. */
export function PublishForm({ packageId, newest, onPublished }: { packageId: string; newest: string | undefined; onPublished: (versionId: string) => void }) {
  const [semver, setSemver] = useState(nextPatch(newest));
  const [chosen, setChosen] = useState<Chosen | null>(null);
  const folder = useRef<HTMLInputElement>(null);
  const publish = useAction();
  const errors = fieldErrors(publish.error);
  useEffect(() => setSemver(nextPatch(newest)), [newest]);
  // Not in Preact's attribute types; every browser the console supports honours it.
  useEffect(() => folder.current?.setAttribute('webkitdirectory', ''), []);
  const choose = async (e: Event, fromFolder: boolean) => {
    const input = e.target as HTMLInputElement;
    if (input.files) setChosen(await read(input.files, fromFolder));
  };
  const paths = Object.keys(chosen?.files ?? {}).sort();
  const fileErrors = Object.entries(errors).filter(([k]) => k.startsWith('files'));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!chosen) return;
    const res = await publish.run(() => api.POST('/v1/packages/{id}/versions', { params: { path: { id: packageId } }, body: { semver, files: chosen.files } }));
    if (res.data) {
      setChosen(null);
      onPublished(res.data.id);
    }
  };
  return (
    <form class="card form" onSubmit={submit} aria-labelledby="publish-title" noValidate>
      <h2 id="publish-title">Publish a version</h2>
      <p class="hint">Every file is a Mustache template, sent by its path in the folder. The server checks each one and refuses the version if one does not parse.</p>
      <Field label="Version" name="publish-semver" error={errors['semver']} hint="Semantic version, such as 1.2.0">
        <input {...inputProps('publish-semver', errors['semver'])} value={semver} onInput={(e) => setSemver((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="A folder of templates" name="publish-folder">
        <input type="file" id="f-publish-folder" ref={folder} multiple onChange={(e) => void choose(e, true)} />
      </Field>
      <Field label="Or single files" name="publish-files">
        <input type="file" id="f-publish-files" multiple onChange={(e) => void choose(e, false)} />
      </Field>
      {chosen && (
        <div role="status">
          <p>
            {paths.length} {paths.length === 1 ? 'file' : 'files'} to publish{chosen.refused.length > 0 && <>; left out, not UTF-8 text: {chosen.refused.join(', ')}</>}
          </p>
          <ul class="paths" aria-label="Files to publish">
            {paths.map((p) => (
              <li key={p}>
                <code>{p}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {fileErrors.map(([path, message]) => (
        <p role="alert" class="error" key={path}>
          {path.replace(/^files\.?/, '') || 'Files'}: {message}
        </p>
      ))}
      <FormError error={fileErrors.length > 0 ? null : publish.error} fields={['semver']} />
      <div class="actions">
        <button type="submit" disabled={publish.busy || paths.length === 0}>
          {publish.busy ? 'Publishing…' : 'Publish'}
        </button>
      </div>
    </form>
  );
}
