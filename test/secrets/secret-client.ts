import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestApp } from '../helpers/harness.js';
import type { Schemas } from '../helpers/test-app.js';

/** Calls of the secrets API with one caller's headers, for the secrets suites. */
export function secretClient(h: TestApp, headers: Record<string, string>) {
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, extra: Record<string, string> = {}) =>
    h.app.inject({ method, url: `/v1${url}`, headers: { ...headers, ...extra }, ...(payload !== undefined ? { payload: payload as object } : {}) });

  return {
    call,
    async createSecret(name = `s-${randomBytes(4).toString('hex')}`) {
      const res = await call('POST', '/secrets', { name });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ id: string; name: string; etag: string; workspace_id: string; created_at: number; updated_at: number }>();
    },
    async addVersion(secretId: string, data: Buffer, comment?: string) {
      const res = await call('POST', `/secrets/${secretId}/versions`, { data: data.toString('base64'), ...(comment !== undefined ? { comment } : {}) });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<Version>();
    },
    transition: (secretId: string, versionId: string, action: 'enable' | 'disable' | 'destroy', ifMatch?: string) =>
      call('POST', `/secrets/${secretId}/versions/${versionId}:${action}`, undefined, ifMatch === undefined ? {} : { 'if-match': ifMatch }),
    access: (secretId: string, versionId: string) => call('GET', `/secrets/${secretId}/versions/${versionId}:access`),
    async getVersion(secretId: string, versionId: string) {
      const res = await call('GET', `/secrets/${secretId}/versions/${versionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<Version>();
    },
  };
}

export type Version = Schemas['SecretVersion'];
