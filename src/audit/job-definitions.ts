import type { ServiceDeps } from '../service-deps.js';
import type { JobDefinition } from '../jobs/runner.js';
import { createAuditService } from './service.js';
import { PURGE_AUDIT_EVENTS } from './job-kinds.js';

export function auditJobs(deps: ServiceDeps): JobDefinition[] {
  const audit = createAuditService(deps);
  return [{ kind: PURGE_AUDIT_EVENTS, run: async () => ({ events: await audit.purge() }), everySeconds: 3600 }];
}
