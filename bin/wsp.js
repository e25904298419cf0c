#!/usr/bin/env node
// The bundle of dist/cli/main.js and its packages (scripts/bundle.mjs), made by `npm run build`.
import '../dist/wsp.mjs';
