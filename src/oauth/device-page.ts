/**
 * The HTML of `/device`, where a person approves or denies a device login. No script: a plain
 * form that works in any browser. The session token travels in the POST body; without
 * cookies there is no ambient credential, so a cross-site form cannot act for anyone.
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

export interface FormPage {
  userCode?: string;
  error?: string;
}

/** The form: the code (filled in from `verification_uri_complete`), the session token, two buttons. */
export function formPage({ userCode = '', error }: FormPage): string {
  return layout(
    'Sign in a device',
    `<h1>Sign in a device</h1>
<p>A command-line client such as <code>wsp login</code> shows a code. Enter it with your session token to let that client act as you.</p>
<p class="note">Approve only a login you started yourself, and only if this code is the one your terminal shows.</p>
${error ? `<p class="message error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="device">
<label for="user_code">Code</label>
<input id="user_code" name="user_code" value="${escapeHtml(userCode)}" placeholder="XXXX-XXXX" maxlength="9" pattern="[A-Za-z]{4}[\\- ]?[A-Za-z]{4}" autocomplete="off" autocapitalize="characters" spellcheck="false" required>
<label for="session_token">Session token</label>
<input id="session_token" name="session_token" type="password" autocomplete="current-password" required>
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
    state === 'approved'
      ? `Approved. ${clientId} (code ${userCode}) is signing in as you; you can return to your terminal.`
      : `Denied. The login of ${clientId} (code ${userCode}) will fail.`;
  return layout(state === 'approved' ? 'Device approved' : 'Device denied', `<h1>${state === 'approved' ? 'Device approved' : 'Device denied'}</h1>\n<p class="message ${state === 'approved' ? 'ok' : 'error'}" role="status">${escapeHtml(text)}</p>`);
}
