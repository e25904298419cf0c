import { validationError } from '../shared/errors.js';
import { isPrivateAddress, resolveAll, type AddressPolicy } from './address-policy.js';

const URL_PATH = ['body', 'url'];

/**
 * A webhook URL the platform will call: parseable, https (unless WSP_WEBHOOKS_ALLOW_HTTP), no
 * credentials in it, and a host that resolves only to public addresses (unless
 * WSP_WEBHOOKS_ALLOW_PRIVATE). Each delivery checks the addresses again when it connects.
 */
export async function checkWebhookUrl(raw: string, policy: AddressPolicy): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError(URL_PATH, 'url is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw validationError(URL_PATH, `url must be https (the server does not allow plain http webhooks: WSP_WEBHOOKS_ALLOW_HTTP)`);
  }
  if (url.username || url.password) throw validationError(URL_PATH, 'url must not carry a user name or password');
  if (url.hash) throw validationError(URL_PATH, 'url must not have a fragment (#...)');
  if (!policy.allowPrivate) {
    let addresses: string[];
    try {
      addresses = await resolveAll(url.hostname);
    } catch {
      throw validationError(URL_PATH, `url's host ${url.hostname} does not resolve`);
    }
    const inside = addresses.filter(isPrivateAddress);
    if (inside.length > 0) throw validationError(URL_PATH, `url's host ${url.hostname} resolves to a private, loopback or link-local address (${inside.join(', ')}), which webhooks may not reach`);
  }
  return url.toString();
}
