import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../config.js';
import { ErrorCodes } from '../shared/errors.js';

const errorTable = Object.entries(ErrorCodes)
  .map(([name, c]) => `| ${c.code} | ${c.status} | ${name} | ${c.message} |`)
  .join('\n');

export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workspace Platform API',
        version: '1.0.0',
        description: `Workspaces, dashboards, secrets, installs, compute and notifications.\n\nEvery error uses the envelope \`{success: false, errors: [{code, message, path?, metadata?}], result: {}}\`.\n\n| code | status | name | meaning |\n|---|---|---|---|\n${errorTable}`,
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A session token (32 characters), a workspace API token (sk_svc_...), or an OAuth2 JWT',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    hideUntagged: false,
  };
}
