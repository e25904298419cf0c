// `npm run docs:config`: rewrites the configuration table of docs/operations.md from the
// settings' schema (scripts/config-reference.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Environment } from '../src/config.js';
import { GUIDE, withConfigurationTable } from './config-reference.js';
import { REPO_ROOT } from './repo-root.js';

fs.writeFileSync(GUIDE, withConfigurationTable(fs.readFileSync(GUIDE, 'utf8')));
console.log(`wrote the configuration table of ${path.relative(REPO_ROOT, GUIDE)} (${Object.keys(Environment.properties).length} variables)`);
