import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../config.js';
import { ErrorCodes } from '../shared/errors.js';
import { isNoBodySchema } from './validation.js';

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
    // A route that takes no body validates one against a schema of its own (`closeUndeclaredParts`):
    // the document shows no requestBody for it, which is what "no body" means in OpenAPI.
    transform: ({ schema, url }) => {
      if (!schema || !isNoBodySchema((schema as { body?: unknown }).body)) return { schema, url };
      const { body: _noBody, ...rest } = schema as Record<string, unknown>;
      return { schema: rest as typeof schema, url };
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    hideUntagged: false,
  };
}
