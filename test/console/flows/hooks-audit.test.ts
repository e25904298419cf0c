import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { startReceiver } from '../../webhooks/receiver.js';
import { Webhook } from 'standardwebhooks';
import { newId } from '../../../src/shared/ids.js';
import { assertFits, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Webhooks and the logs in the console (issue 50, points 6 and 8): a ping on creation, wildcards
 * as the CLI takes them, the URL's rules as this server holds them, retry of any delivery, a
 * delivery's request and answer and each of its attempts, the endpoint changed with If-Match (a lost race says so and
 * offers the other version); the workspace's audit log with links to each resource, an event's
 * whole record, days to filter by and no filter that matches nothing; each person's security log.
 */
const noChromium = chromiumMissing('console webhooks and logs');
let site: ConsoleSite;
let secret: string | undefined;
const receiver = await startReceiver(() => secret);
/** A receiver that fails its first request (500, with a body saying why) and takes the next. */
let flakySecret: string | undefined;
const flaky = await startReceiver(
  () => flakySecret,
  (_r, n) => (n === 1 ? { status: 500, headers: { 'x-flaky': 'first' }, body: 'flaky receiver: database unavailable, try later' } : 204),
);
before(async () => {
  // Retries a second apart (the first two of them), so the flaky receiver's second attempt comes at once.
  if (!noChromium) site = await startConsoleSite({ WSP_WEBHOOKS_ALLOW_HTTP: 'true', WSP_WEBHOOKS_ALLOW_PRIVATE: 'true', WSP_WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,300' });
});
after(async () => {
  await site?.close();
  await receiver.close();
  await flaky.close();
});

/** Waits for `ok()`, checking every 50 ms, up to `ms`. */
async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 20_000) {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A day as a date input takes it, in this machine's time zone (the browser's too). */
const day = (offsetDays = 0) => {
  const d = new Date();
  d.setDate(d.getDate() + offsetDays);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

type Hook = { id: string; url: string; etag: string; event_types: string[]; description: string | null };

test('webhooks: the URL rules of this server, wildcards, a ping on creation, retry of any delivery, its request and answer, an edit that loses a race', { skip: noChromium }, async () => {
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'hooks', async () => {
    await page.goto(`${site.url}/console/admin/webhooks`);
    // This server allows http and private addresses (its operator's settings): the hint says so.
    const hint = page
      .locator('.field')
      .filter({ has: page.getByLabel('URL') })
      .locator('small');
    await hint.filter({ hasText: 'this server allows plain http' }).waitFor();
    assert.match(await hint.innerText(), /private and loopback ones too/);

    // `<resource>.*` as the CLI's --events takes it; no sign-in types, which reach no webhook.
    const offered = await page.getByLabel('Events').locator('option').allInnerTexts();
    for (const t of ['install.*', 'secret.*', 'webhook.*', 'secret.created']) assert.ok(offered.includes(t), `${t} offered`);
    assert.deepEqual(
      offered.filter((t) => t.startsWith('session.') || t.startsWith('device_authorization.')),
      [],
    );

    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Events').selectOption(['install.*', 'secret.*']);
    assert.ok(await page.getByLabel('Send a test event once it is added').isChecked(), 'the ping is on by default');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    secret = await page.getByLabel('Signing secret').innerText();
    const hooks = (await site.api<{ data: Hook[] }>('GET', '/v1/webhooks')).data;
    assert.deepEqual(hooks[0]!.event_types.sort(), ['install.*', 'secret.*']);
    const id = hooks[0]!.id;
    // The ping: a webhook.tested event, as `wsp webhooks test` sends, received and verified.
    const tested = () => receiver.received.filter((r) => (JSON.parse(r.body) as { type: string }).type === 'webhook.tested');
    await until(() => tested().length === 1, 'the ping');
    // Checked here, not by the receiver: the ping may arrive before the page's secret is read.
    const ping = tested()[0]!;
    new Webhook(secret).verify(ping.body, { 'webhook-id': ping.id, 'webhook-timestamp': ping.timestamp, 'webhook-signature': ping.signature });

    // The delivery succeeded; Retry sends it again all the same (the receiver lost it, say).
    await page.getByRole('link', { name: 'see how its delivery went' }).click();
    await page.getByRole('cell', { name: 'succeeded' }).waitFor();
    await page.getByRole('button', { name: 'Retry' }).click();
    await until(() => tested().length === 2, 'the retried delivery');
    assert.equal(tested()[1]!.id, tested()[0]!.id, 'the same webhook-id: receivers dedupe on it');
    // The receiver has the request before the sender records it: the page is read again once the
    // API has the second attempt (a 'succeeded' cell seen sooner can be the row before the retry).
    const recorded = async () => (await site.api<{ data: { attempts: number; state: string }[] }>('GET', `/v1/webhooks/${id}/deliveries`)).data[0];
    await until(async () => (await recorded())?.attempts === 2 && (await recorded())?.state === 'succeeded', 'the retry recorded');
    await page.reload();
    await page.getByRole('cell', { name: 'succeeded' }).waitFor();

    // Its request and answer, as far as the API keeps them.
    const [delivery] = (await site.api<{ data: { id: string; event_id: string }[] }>('GET', `/v1/webhooks/${id}/deliveries`)).data;
    await page.getByRole('button', { name: 'Details' }).click();
    const detail = page.getByRole('region', { name: `Delivery ${delivery!.id}` });
    await detail.waitFor();
    const text = await detail.innerText();
    assert.match(text, new RegExp(`POST ${receiver.url.replace(/[.?]/g, '\\$&')}`));
    assert.ok(text.includes(delivery!.event_id), 'the webhook-id sent');
    assert.match(text, /Attempts\s+2/);
    assert.match(text, /Last status\s+204/);

    // Change the URL and the events (If-Match): saved.
    await page.getByLabel('URL').fill(`${receiver.url}?v=2`);
    await page.getByLabel('Events').selectOption(['install.*', 'secret.*', 'dashboard.created']);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    let now = await site.api<Hook>('GET', `/v1/webhooks/${id}`);
    assert.equal(now.url, `${receiver.url}?v=2`);
    assert.deepEqual(now.event_types.sort(), ['dashboard.created', 'install.*', 'secret.*']);

    // Someone else changes it meanwhile: the save says so, takes the focus, and offers their version.
    await site.api('PATCH', `/v1/webhooks/${id}`, { description: 'changed elsewhere' }, { headers: { 'if-match': `"${now.etag}"` } });
    await page.getByLabel('URL').fill(`${receiver.url}?v=3`);
    await page.getByRole('button', { name: 'Save changes' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Someone else changed this webhook' });
    await alert.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent ?? ''), await alert.innerText());
    assert.equal((await site.api<Hook>('GET', `/v1/webhooks/${id}`)).url, `${receiver.url}?v=2`, 'nothing saved');
    await page.getByRole('button', { name: 'Reload their version' }).click();
    await until(async () => (await page.getByLabel('Description').inputValue()) === 'changed elsewhere', 'their version in the form');
    await page.getByLabel('URL').fill(`${receiver.url}?v=3`);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    now = await site.api<Hook>('GET', `/v1/webhooks/${id}`);
    assert.equal(now.url, `${receiver.url}?v=3`);
    assert.equal(now.description, 'changed elsewhere', 'their change kept');

    await page.setViewportSize({ width: 360, height: 800 });
    await page.getByRole('button', { name: 'Details' }).click();
    await assertFits(page);
    await shot(page, 'webhook-edit-360');
  });
  await w.done();
});

test('the audit log: resources linked, an event in full (IP, user agent), days, no filter that matches nothing', { skip: noChromium }, async () => {
  const made = await site.api<{ id: string }>('POST', '/v1/secrets', { name: 'AUDITED' }, { headers: { 'user-agent': 'audit-test-agent/1.0' } });
  await site.api('POST', `/v1/secrets/${made.id}/versions`, { data: Buffer.from('v').toString('base64') });
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'audit', async () => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('cell', { name: 'secret.created' }).waitFor();
    // Sign-ins belong to no workspace: the filter offers none of their types.
    const offered = await page.getByLabel('Type').locator('option').allInnerTexts();
    assert.ok(offered.includes('secret.*') && offered.includes('secret.created'));
    assert.deepEqual(
      offered.filter((t) => /^(session|device_authorization|user)\./.test(t)),
      [],
    );

    // Every resource named links to its page: a version to its secret.
    await page
      .getByRole('row', { name: /secret_version\.created/ })
      .getByRole('link')
      .click();
    await page.waitForURL(new RegExp(`/console/secrets/${made.id}$`));
    await page.getByRole('heading', { name: 'AUDITED' }).waitFor();
    await page.goBack();

    // An event in full: who, from where (IP, user agent), with what, and its data.
    await page
      .getByRole('row', { name: /secret\.created/ })
      .getByRole('button', { name: 'Details' })
      .click();
    const detail = page.getByRole('region', { name: 'secret.created' });
    await detail.waitFor();
    const text = await detail.innerText();
    assert.match(text, /User agent\s+audit-test-agent\/1\.0/);
    assert.match(text, /IP address\s+[0-9a-f:.]+\n/);
    assert.ok(text.includes(made.id) && text.includes('"name": "AUDITED"'));
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'secret.created', 'the detail takes the focus');

    // Days: from tomorrow, nothing; the empty state does not claim sign-ins are here.
    const sent = page.waitForRequest((r) => r.url().includes('/v1/audit_events') && /since=\d+/.test(r.url()));
    await page.getByLabel('From', { exact: true }).fill(day(1));
    await sent;
    await page.getByText('No events match these filters').waitFor();
    const empty = await page.locator('.empty').innerText();
    assert.doesNotMatch(empty, /sign-in[^.]*(is|are) recorded here/i);
    assert.match(empty, /Sign-ins belong to no workspace/);
    assert.equal(await page.getByRole('link', { name: 'your security log' }).getAttribute('href'), '/console/account/events');
    // Today to today: the events are back; the address keeps the days.
    const both = page.waitForRequest((r) => r.url().includes('/v1/audit_events') && /since=\d+/.test(r.url()) && /until=\d+/.test(r.url()));
    await page.getByLabel('To', { exact: true }).fill(day(0));
    await page.getByLabel('From', { exact: true }).fill(day(0));
    await both;
    await page.getByRole('cell', { name: 'secret.created' }).waitFor();
    await page.reload();
    await page.getByRole('cell', { name: 'secret.created' }).waitFor();
    assert.equal(await page.getByLabel('From', { exact: true }).inputValue(), day(0));

    await page.setViewportSize({ width: 360, height: 800 });
    await assertFits(page);
    await shot(page, 'audit-detail-360');
  });
  await w.done();
});

test("each person's security log: from the account area, newest first, where from, paged, filtered", { skip: noChromium }, async () => {
  // Older sign-ins than a page holds, as the log has them (no workspace, the owner as actor).
  const base = Math.floor(Date.now() / 1000) - 3600;
  await site.database.db
    .insertInto('events')
    .values(
      Array.from({ length: 55 }, (_, i) => ({
        id: newId('evt'),
        workspace_id: null,
        type: 'session.created',
        actor_kind: 'user',
        actor_id: site.owner.user_id,
        credential_id: null,
        resource_type: 'session',
        resource_id: `ses_old${i}`,
        request_id: null,
        ip: '203.0.113.7',
        user_agent: `old-client/${i}`,
        created_at: base + i,
        data: '{"method":"password"}',
      })),
    )
    .execute();
  // A sign-in that fails naming the account, from a client of its own.
  const failed = await fetch(`${site.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'intruder-agent/1' },
    body: JSON.stringify({ email: site.owner.email, password: 'not the password at all' }),
  });
  assert.equal(failed.status, 401);
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'security-log', async () => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Your sessions' }).click();
    await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Your security log' }).click();
    await page.getByRole('heading', { name: 'Your security log' }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Your sessions' }).getAttribute('aria-current'), 'page', 'the account area stays marked');
    await page.getByRole('cell', { name: 'session.failed' }).waitFor();
    // Newest first: this browser's sign-in, then the failure, each with where it came from.
    const rows = page.locator('tbody tr');
    assert.equal(await rows.count(), 50);
    assert.match(await rows.nth(0).innerText(), /session\.created[\s\S]*HeadlessChrome/);
    assert.match(await rows.nth(1).innerText(), /session\.failed[\s\S]*intruder-agent\/1/);
    const olds = async () => (await page.locator('tbody tr td:nth-child(3)').allInnerTexts()).filter((c) => c.includes('old-client/'));
    const firstPage = await olds();
    await page.getByRole('button', { name: 'Older events' }).click();
    await page.waitForURL(/cursor=/);
    await until(async () => (await rows.count()) < 50, 'the next page');
    const secondPage = await olds();
    assert.ok(secondPage.length > 0 && secondPage.every((c) => !firstPage.includes(c)), 'the next page, none repeated');
    assert.equal(new Set([...firstPage, ...secondPage]).size, 55, 'every one of them, on one page or the other');

    // Filtered by type; the detail names who tried (not signed in) and from where.
    await page.getByLabel('Type').selectOption('session.failed');
    await page.waitForURL(/type=session\.failed/);
    await page.getByRole('cell', { name: 'session.created' }).first().waitFor({ state: 'detached' });
    await page
      .getByRole('row', { name: /session\.failed/ })
      .getByRole('button', { name: 'Details' })
      .click();
    const text = await page.getByRole('region', { name: 'session.failed' }).innerText();
    assert.match(text, /By\s+someone not signed in/);
    assert.match(text, /User agent\s+intruder-agent\/1/);

    await page.setViewportSize({ width: 360, height: 800 });
    await assertFits(page);
    await shot(page, 'security-log-360');
  });
  await w.done();
});

test("a delivery's attempts: a receiver that fails once then takes it, each attempt's request and response in the delivery's details, at 360 px too", { skip: noChromium }, async () => {
  const hook = await site.api<Hook & { secret: string }>('POST', '/v1/webhooks', { url: flaky.url, event_types: ['secret.created'], description: 'flaky' });
  flakySecret = hook.secret;
  // A test event (as the page's button sends): it leaves the audit log's secret events as the test above counts them.
  await site.api('POST', `/v1/webhooks/${hook.id}:test`, {});
  type Delivery = { id: string; state: string; attempts: number };
  const delivery = async () => (await site.api<{ data: Delivery[] }>('GET', `/v1/webhooks/${hook.id}/deliveries`)).data[0];
  await until(async () => (await delivery())?.state === 'succeeded', 'the delivery, after one failure');
  assert.equal(flaky.received.length, 2);
  assert.ok(flaky.received.every((r) => r.verified));
  const d = (await delivery())!;
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'attempts', async () => {
    await page.goto(`${site.url}/console/admin/webhooks/${hook.id}`);
    await page.getByRole('button', { name: 'Details' }).click();
    const detail = page.getByRole('region', { name: `Delivery ${d.id}` });
    const items = detail.getByRole('list', { name: 'Attempts' }).getByRole('listitem');
    await items.nth(1).waitFor();
    assert.equal(await items.count(), 2);
    const [first, second] = [items.nth(0), items.nth(1)];
    assert.match(await first.locator('summary').innerText(), /^Attempt 1 · .+ · \d+ ms · 500 · answered 500: flaky receiver/);
    assert.match(await second.locator('summary').innerText(), /^Attempt 2 · .+ · \d+ ms · 204$/);
    // Opened: the request as the receiver got it, and the failing answer's body and headers.
    await first.locator('summary').click();
    const requestHeaders = await first.getByLabel('Attempt 1 request headers').innerText();
    assert.ok(requestHeaders.includes(`webhook-signature: ${flaky.received[0]!.signature}`), requestHeaders);
    assert.ok(requestHeaders.includes(`webhook-id: ${flaky.received[0]!.id}`));
    assert.equal(await first.getByLabel('Attempt 1 request body').innerText(), flaky.received[0]!.body);
    assert.equal(await first.getByLabel('Attempt 1 response body').innerText(), 'flaky receiver: database unavailable, try later');
    assert.match(await first.getByLabel('Attempt 1 response headers').innerText(), /^x-flaky: first$/m);
    await second.locator('summary').click();
    await second.getByText('An empty body.').waitFor();

    await page.setViewportSize({ width: 360, height: 800 });
    await assertFits(page);
    await shot(page, 'webhook-attempts-360');
  });
  await w.done();
});
