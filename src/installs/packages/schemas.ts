import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../../http/schemas.js';

/** The regular expression semver.org gives for SemVer 2.0.0, anchored. */
export const SEMVER_PATTERN =
  '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';

/** Names land in commit messages: one line, no control characters. */
export const DisplayName = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, ...patterned('^[^\\u0000-\\u001f\\u007f]+$', 'one line of text without control characters (no tabs or line breaks)', 'Web service'), description });

export const MAX_FILES = 1000;

export const CreatePackageBody = Type.Object({ name: DisplayName('Unique in the workspace, 1-100 characters') }, { title: 'CreatePackageBody', additionalProperties: false });
export type CreatePackageBody = Static<typeof CreatePackageBody>;

export const Package = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    name: Type.String(),
    created_at: UnixSeconds(),
    etag: Type.String({ description: 'Changes when the package does; DELETE takes it as If-Match' }),
  },
  { title: 'Package', additionalProperties: false },
);
export type Package = Static<typeof Package>;

export const PackageList = ListEnvelope(Package, 'Newest first');

export const CreateVersionBody = Type.Object(
  {
    semver: Type.String({
      maxLength: 256,
      ...patterned(
        SEMVER_PATTERN,
        'a semantic version such as 1.2.0 or 2.0.0-rc.1+build.5: MAJOR.MINOR.PATCH without leading zeros, then a pre-release after - and build metadata after + if any',
        '1.2.0',
      ),
      description: 'A SemVer 2.0.0 version, unique within the package',
    }),
    files: Type.Record(Type.String(), Type.String(), {
      minProperties: 1,
      maxProperties: MAX_FILES,
      examples: [{ 'README.md': '# {{name}}\n', 'deploy/app.yaml': 'replicas: {{replicas}}\nregion: {{region}}\n' }],
      description:
        'Relative file path to Mustache template. Paths are normalized (`a//./b` is `a/b`), at most 1024 characters and 64 directories deep; absolute paths, `..`, `.git`, `.gitmodules`, backslashes and control characters are refused. Templates are parsed here; partials are not supported.',
    }),
  },
  { title: 'CreateVersionBody', additionalProperties: false },
);
export type CreateVersionBody = Static<typeof CreateVersionBody>;

const versionFields = {
  id: Type.String(),
  package_id: Type.String(),
  workspace_id: Type.String(),
  semver: Type.String(),
  created_at: UnixSeconds(),
};

export const PackageVersion = Type.Object(
  { ...versionFields, files: Type.Record(Type.String(), Type.String(), { description: 'Normalized path to template' }) },
  { title: 'PackageVersion', additionalProperties: false },
);
export type PackageVersion = Static<typeof PackageVersion>;

export const PackageVersionSummary = Type.Object(versionFields, { title: 'PackageVersionSummary', additionalProperties: false, description: 'A version without its files (GET the version for them)' });

export const PackageVersionList = ListEnvelope(PackageVersionSummary, 'Newest first');

export const ListQuery = PageQuery(100, 20);

export const PackageParams = Type.Object({ id: PathId(64, 'Package id, `pkg_<id>` or bare') });
export const PackageVersionParams = Type.Object({
  id: PathId(64, 'Package id, `pkg_<id>` or bare'),
  version_id: PathId(64, 'Package version id, `pkgv_<id>` or bare'),
});

export const PreviewBody = Type.Object(
  { values: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The values, as an install would have them; absent: {}' })) },
  { title: 'PreviewBody', additionalProperties: false },
);

export const Preview = Type.Object(
  { files: Type.Record(Type.String(), Type.String(), { description: 'Each rendered file by its path, as UTF-8 text' }) },
  { title: 'Preview', additionalProperties: false },
);
