/**
 * The lines between the parts of src/ (docs/architecture.md, "Layers"), checked by `npm run
 * lint:deps` as part of `npm test`. An area is a folder of src/ (`installs`, `dashboards`,
 * `compute`, ...); shared machinery is src/shared, src/db, src/http, src/auth, src/jobs and
 * src/git; the composition root is the files at the top of src/ and src/cli.
 *
 * Type-only imports count: a type of another area's store is a dependency on that store.
 */
const MACHINERY = '^src/(shared|db|http|auth|jobs|git|events)/';
const SCHEMA = ['^src/.*schemas\\.ts$', '^src/.*/schemas/[^/]+\\.ts$'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-foreign-store',
      comment:
        "An area reaches another only through its public face: its service and the functions it exports that take a transaction. Its store (Kysely queries) is its own.",
      severity: 'error',
      from: { path: '^src/([^/]+)' },
      to: { path: ['^src/.+/store\\.ts$', '^src/.+-store\\.ts$'], pathNot: '^src/$1/' },
    },
    {
      name: 'no-foreign-tables',
      comment:
        "An area's row types (src/<area>/tables.ts) are its stores' business: another area gets what the owner's functions answer, never its rows' types. src/db/tables.ts (DB and the machinery's tables) is everyone's.",
      severity: 'error',
      from: { path: '^src/([^/]+)' },
      to: { path: '^src/.+/tables\\.ts$', pathNot: ['^src/$1/', '^src/db/tables\\.ts$'] },
    },
    {
      name: 'machinery-imports-no-area',
      comment:
        'Shared machinery (shared, db, http, auth, jobs, git, events) imports no area and not the composition root: it receives what it needs (credential lookups, job handlers, settings) from the composition root.',
      severity: 'error',
      from: { path: MACHINERY },
      to: { path: '^src/', pathNot: MACHINERY },
    },
    {
      name: 'shared-imports-only-shared',
      comment: 'src/shared is the bottom layer: plain helpers every other part may use.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'nothing-imports-the-cli',
      comment: 'The command line is the top: it starts things, nothing starts it.',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'schemas-import-no-runtime',
      comment:
        'A schema module is data for TypeBox: it imports TypeBox and other schema modules, nothing that runs (validators, services, errors).',
      severity: 'error',
      from: { path: SCHEMA },
      to: { pathNot: [...SCHEMA, '(^|/)node_modules/@sinclair/typebox/'] },
    },
    {
      name: 'worker-loads-no-web-server',
      comment:
        '`wsp worker` (src/worker.ts) is composed apart from HTTP: nothing it loads, at any depth, brings in Fastify or its plugins.',
      severity: 'error',
      from: { path: '^src/worker\\.ts$' },
      to: { path: 'node_modules/(fastify|@fastify/|find-my-way|ajv)', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
