// Typed linting (issue 49.7). Each tree is checked against the tsconfig that compiles it, so the
// rules that need types (floating promises, misused promises) see what tsc sees: three programs,
// src/test/scripts/bench in one (tsconfig.test.json). The rules turned off below, and why, and why
// `project` rather than `projectService`, are in docs/decisions.md ("A linter with type information").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // What .gitignore lists; .test-build/ holds the test files the runner bundles while ESLint runs beside them (npm test).
  { ignores: ['**/dist/**', '**/node_modules/**', '.test-build/**', '.wsp-test/**', 'data/**', 'test-output/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'console/src/**/*.{ts,tsx}', 'packages/sdk/{src,test}/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './console/tsconfig.json', './packages/sdk/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test()/describe() return promises the runner itself awaits.
          allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }],
        },
      ],
      // A JSX handler may be async: Preact ignores what it returns, and each handler catches its own errors.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A `let` a callback reads before it is first set (a timer its own callback may clear) cannot be a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Turned off: see docs/decisions.md.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      'no-control-regex': 'off',
    },
  },
  {
    // A double cast silences the type checker entirely: in src each one says why it is needed.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'TSAsExpression > TSAsExpression.expression[typeAnnotation.type="TSUnknownKeyword"]', message: '`as unknown as` needs an eslint-disable-next-line comment that says why.' },
      ],
    },
  },
  {
    // Kysely's own rule for migrations: a migration is frozen in time and must not type itself
    // against today's schema, so it takes Kysely<any>.
    files: ['src/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests replace methods on prototypes and objects to inject faults, and put them back.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },
  {
    // Here `any` is an untyped response body or OpenAPI document; the typed in-process client of
    // issue 49.5 replaces them, and then this override goes (docs/decisions.md).
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
