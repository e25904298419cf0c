/**
 * The HTML of `/device`, where a person approves or denies a device login. No script: plain
 * forms that work in any browser. Signed out, the page asks for an email and a password (or
 * offers single sign-on) and signs the browser in with the `wsp_session` cookie; signed in, it
 * shows the code and two buttons, and each decision carries the session's CSRF token: the
 * cookie alone (which another site could make the browser send) decides nothing.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** No script, no framing, forms only to this origin. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:30rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin-top:0}
label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1.1rem;border:1px solid #aab;border-radius:4px}
input[name=user_code]{font-family:ui-monospace,monospace;letter-spacing:.15em;text-transform:uppercase}
.buttons{margin-top:1.5rem;display:flex;gap:1rem}
button{flex:1;padding:.6rem;font-size:1rem;border-radius:4px;border:1px solid #888;cursor:pointer}
button[value=approve]{background:#1f6feb;color:#fff;border-color:#1f6feb}
.note{color:#555;font-size:.9rem}
.message{padding:.8rem;border-radius:4px;margin:1rem 0}
.error{background:#fde8e8;color:#8a1c1c}
.ok{background:#e6f4ea;color:#1e5e2f}
`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Workspace Platform</title>
<style>${STYLE}</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

export interface SignInPage {
  userCode?: string;
  error?: string;
  /** Where single sign-on starts, when it is on. */
  oidcStartUrl?: string | null;
}

const codeField = (userCode: string) => `<label for="user_code">Code</label>
<input id="user_code" name="user_code" value="${escapeHtml(userCode)}" placeholder="XXXX-XXXX" maxlength="9" pattern="[A-Za-z]{4}[\\- ]?[A-Za-z]{4}" autocomplete="off" autocapitalize="characters" spellcheck="false" required>`;

const alert = (error: string | undefined) => (error ? `<p class="message error" role="alert">${escapeHtml(error)}</p>` : '');

/** Signed out: the code, then an email and a password (and single sign-on when it is on). */
export function signInPage({ userCode = '', error, oidcStartUrl }: SignInPage): string {
  const back = `/device${userCode ? `?user_code=${encodeURIComponent(userCode)}` : ''}`;
  const sso = oidcStartUrl ? `<p><a class="sso" href="${escapeHtml(`${oidcStartUrl}?return_to=${encodeURIComponent(back)}`)}">Sign in with single sign-on</a></p>` : '';
  return layout(
    'Sign in a device',
    `<h1>Sign in a device</h1>
<p>A command-line client such as <code>wsp login</code> shows a code. Sign in to let that client act as you.</p>
${alert(error)}
<form method="post" action="device">
${codeField(userCode)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="buttons">
<button type="submit" name="action" value="sign_in">Sign in</button>
</div>
</form>
${sso}`,
  );
}

export interface ApprovePage {
  userCode?: string;
  error?: string;
  /** Who is signed in (their email or name). */
  who: string;
  csrfToken: string;
}

/** Signed in: the code and two buttons; the form carries the session's CSRF token. */
export function approvePage({ userCode = '', error, who, csrfToken }: ApprovePage): string {
  return layout(
    'Sign in a device',
    `<h1>Sign in a device</h1>
<p>Signed in as <strong>${escapeHtml(who)}</strong>. Approve to let the client that shows this code act as you.</p>
<p class="note">Approve only a login you started yourself, and only if this code is the one your terminal shows.</p>
${alert(error)}
<form method="post" action="device">
${codeField(userCode)}
<input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}">
<div class="buttons">
<button type="submit" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny">Deny</button>
</div>
</form>`,
  );
}

/** What the person sees once they have decided. */
export function decidedPage(state: 'approved' | 'denied', userCode: string, clientId: string): string {
  const text =
    state === 'approved' ? `Approved. ${clientId} (code ${userCode}) is signing in as you; you can return to your terminal.` : `Denied. The login of ${clientId} (code ${userCode}) will fail.`;
  return layout(
    state === 'approved' ? 'Device approved' : 'Device denied',
    `<h1>${state === 'approved' ? 'Device approved' : 'Device denied'}</h1>\n<p class="message ${state === 'approved' ? 'ok' : 'error'}" role="status">${escapeHtml(text)}</p>`,
  );
}
