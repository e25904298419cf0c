import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, messageOf } from '../api.js';

/**
 * Email and password (the server sets the HttpOnly session cookie, `cookie: true`), and single
 * sign-on when the server has it: a plain link to its start URL, which comes back to `next`.
 */
export function SignIn({ onSignedIn, next }: { onSignedIn: () => Promise<void>; next: string }) {
  const [sso, setSso] = useState<string | null>(null);
  useEffect(() => {
    void api.GET('/v1/auth/providers', {}).then((res) => setSso(res.data?.oidc_start_url ?? null));
  }, []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const res = await api.POST('/v1/sessions', { body: { email, password, cookie: true } });
    setBusy(false);
    if (res.error) return setError(res.error);
    setError(null);
    await onSignedIn();
  };
  const emailError = fieldError(error, 'email');
  const passwordError = fieldError(error, 'password');
  return (
    <form class="card sign-in" onSubmit={submit} aria-labelledby="sign-in-title" noValidate>
      <h1 id="sign-in-title">Sign in</h1>
      <label>
        Email
        <input
          type="email"
          name="email"
          autocomplete="username"
          required
          value={email}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          aria-invalid={emailError ? 'true' : undefined}
        />
      </label>
      {emailError && <p class="field-error">{emailError}</p>}
      <label>
        Password
        <input
          type="password"
          name="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          aria-invalid={passwordError ? 'true' : undefined}
        />
      </label>
      {passwordError && <p class="field-error">{passwordError}</p>}
      {error && !emailError && !passwordError ? (
        <p role="alert" class="error">
          {messageOf(error)}
        </p>
      ) : null}
      <button type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      {sso && (
        <a class="button secondary" href={`${sso}?return_to=${encodeURIComponent(next)}`}>
          Sign in with single sign-on
        </a>
      )}
    </form>
  );
}
