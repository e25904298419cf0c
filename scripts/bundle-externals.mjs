// The packages scripts/bundle.mjs leaves outside its bundles (dist/wsp.cjs, dist/render-thread.mjs):
// the native SQLite and argon2 bindings, Swagger UI (it serves its page's assets from its own
// directory), PostgreSQL's optional native driver, and tsx (reached only when running from the
// TypeScript sources). Everything else the server runs is inside the bundle, so the container
// image keeps only these of the production dependencies, with what they depend on
// (scripts/container/runtime-modules.mjs).
export const BUNDLE_EXTERNALS = ['better-sqlite3', '@node-rs/argon2', '@fastify/swagger-ui', 'pg-native', 'tsx/esm/api'];
