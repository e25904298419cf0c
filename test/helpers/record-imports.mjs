// `node --import ./test/helpers/record-imports.mjs ...`: appends the URL of every module the
// process resolves (ES imports, and the CommonJS packages they import) to WSP_RECORD_IMPORTS,
// one per line. For tests that must see what a command loads (test/jobs/worker-process.test.ts).
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
const file = ${JSON.stringify(process.env.WSP_RECORD_IMPORTS)};
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  fs.appendFileSync(file, resolved.url + '\\n');
  return resolved;
}
`)}`,
);
