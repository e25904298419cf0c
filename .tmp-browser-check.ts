import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createTestApp } from '/work/main/test/helpers/harness.js';
import { startLogin, poll } from '/work/main/test/oauth/device-helpers.js';

const port = 18765;
const h = await createTestApp({ config: { publicUrl: `http://127.0.0.1:${port}` } });
h.clock.set(Date.now());
const s = await h.seed();
await h.app.listen({ port, host: '127.0.0.1' });
const started = await startLogin(h);
const chrome = (args: string[]) => execFileSync('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=700,700', ...args], { stdio: 'pipe' });
chrome([`--screenshot=/tmp/wspb/form.png`, started.verification_uri_complete]);
fs.writeFileSync('/tmp/wspb/submit.html', `<!doctype html><form id=f method=post action="http://127.0.0.1:${port}/device">
<input name=user_code value="${started.user_code.toLowerCase()}"><input name=session_token value="${s.owner.session}"><button name=action value=approve>go</button></form>
<script>document.querySelector('button').click()</script>`);
chrome(['--virtual-time-budget=5000', '--screenshot=/tmp/wspb/approved.png', 'file:///tmp/wspb/submit.html']);
h.clock.advanceSeconds(5);
const res = await poll(h, started.device_code);
console.log('poll after browser approval:', res.statusCode, res.json().token_type);
await h.close();
