import { checkAfterSchema } from '../http/validation.js';
import { assertUniqueKeys } from './content-rules.js';
import { CreateDashboardBody, UpdateDashboardBody } from './schemas/dashboard.js';

/**
 * A dashboard body's widget ids and filter keys are unique, which JSON Schema cannot say: a
 * repeat is a 422 (7104, 7105) of validation itself, so it comes before any 403 or 404.
 */
export function checkDashboardBodies(): void {
  for (const body of [CreateDashboardBody, UpdateDashboardBody]) {
    checkAfterSchema(body, (data) => assertUniqueKeys(data as Parameters<typeof assertUniqueKeys>[0], ['body']));
  }
}
