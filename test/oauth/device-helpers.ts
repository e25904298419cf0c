import type { TestApp } from '../helpers/harness.js';
import { as } from '../helpers/harness.js';
import type { Schemas } from '../helpers/test-app.js';

export const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** POSTs an application/x-www-form-urlencoded body, as OAuth clients do. */
export function postForm(h: TestApp, url: string, fields: Record<string, string>, extra: { remoteAddress?: string } = {}) {
  return h.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
    ...extra,
  });
}

export type Started = Schemas['DeviceAuthorizationResponse'];

export async function startLogin(h: TestApp, clientId = 'wsp-cli'): Promise<Started> {
  const res = await postForm(h, '/v1/oauth/device_authorization', { client_id: clientId });
  if (res.statusCode !== 200) throw new Error(`device_authorization: ${res.statusCode} ${res.body}`);
  return res.json();
}

export function poll(h: TestApp, deviceCode: string, clientId = 'wsp-cli') {
  return postForm(h, '/v1/oauth/token', { grant_type: GRANT, client_id: clientId, device_code: deviceCode });
}

export function decide(h: TestApp, decision: 'approve' | 'deny', credential: string, userCode: string, remoteAddress = '127.0.0.1') {
  return h.app.inject({ method: 'POST', url: `/v1/oauth/device/${decision}`, headers: as(credential), payload: { user_code: userCode }, remoteAddress });
}
