import { ApiError } from '../shared/errors.js';
import type { SecretVersionState } from './tables.js';

export type VersionAction = 'enable' | 'disable' | 'destroy';

const TARGET: Record<VersionAction, SecretVersionState> = { enable: 'enabled', disable: 'disabled', destroy: 'destroyed' };

/**
 * The state table of a secret version (the spec's enable, docs/spec-gaps.md, "Secrets" for the rest):
 *
 * | from \ action | enable    | disable   | destroy   |
 * |---------------|-----------|-----------|-----------|
 * | enabled       | no-op     | disabled  | destroyed |
 * | disabled      | enabled   | no-op     | destroyed |
 * | destroyed     | 409 7202  | 409 7202  | no-op     |
 *
 * A no-op answers the version as it is (same etag). Destroyed is final.
 */
export function nextState(from: SecretVersionState, action: VersionAction): SecretVersionState {
  const to = TARGET[action];
  if (from === 'destroyed' && to !== 'destroyed') {
    throw new ApiError('SECRET_VERSION_DESTROYED', { message: `A destroyed version cannot be ${to}; destroyed is final`, metadata: { state: from } });
  }
  return to;
}
