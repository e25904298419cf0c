import fs from 'node:fs';
import path from 'node:path';

/** The SDK README's ```ts examples, each under its ### title. */
export function readmeExamples(): { title: string; code: string }[] {
  return [...fs.readFileSync('packages/sdk/README.md', 'utf8').matchAll(/^### (.+)\n[\s\S]*?```ts\n([\s\S]*?)```/gm)].map((m) => ({ title: m[1]!, code: m[2]! }));
}

/** The compiler options a reader of the README would use: strict, NodeNext, the libraries checked too. */
export const EXAMPLE_COMPILER_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  noUncheckedIndexedAccess: true,
  types: ['node'],
  outDir: 'out',
  skipLibCheck: false,
};

/** The examples as `example-<i>.ts` in `dir`, an ES module package with a tsconfig.json of EXAMPLE_COMPILER_OPTIONS. */
export function writeExampleProject(dir: string, examples: { code: string }[]): void {
  examples.forEach((e, i) => fs.writeFileSync(path.join(dir, `example-${i}.ts`), e.code));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: EXAMPLE_COMPILER_OPTIONS, include: ['*.ts'] }));
}
