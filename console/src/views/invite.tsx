import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Field, FormError, inputProps } from '../components.js';
import { fieldErrors } from '../format.js';
import { useAction } from '../hooks.js';

/**
 * The page an invitation link opens (`/console/invite#<secret>`): the secret stays in the
 * fragment, never sent to a server but in the accept request itself. Signed in, accepting
 * joins the workspace; signed out, the person also names themselves and picks a password.
 */
export function AcceptInvitation({ signedIn, onAccepted }: { signedIn: boolean; onAccepted: (workspaceId: string) => Promise<void> }) {
  const token = location.hash.slice(1);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const accept = useAction();
  const errors = fieldErrors(accept.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = signedIn ? { token } : { token, name, password };
    const res = await accept.run(() => api.POST('/v1/invitations:accept', { body }));
    if (res.ok) {
      history.replaceState(null, '', location.pathname);
      if (res.data) await onAccepted(res.data.workspace_id);
    }
  };
  if (!token)
    return (
      <p role="alert" class="error">
        This link has no invitation in it: open the whole link you were sent.
      </p>
    );
  return (
    <form class="card sign-in" onSubmit={submit} aria-labelledby="invite-title" noValidate>
      <h1 id="invite-title">Join the workspace</h1>
      {signedIn ? (
        <p>Accept the invitation to join it with the account you are signed in with.</p>
      ) : (
        <>
          <p>You were invited. Choose your name and a password to make your account.</p>
          <Field label="Your name" name="invite-name" error={errors['name']}>
            <input {...inputProps('invite-name', errors['name'])} autocomplete="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Password" name="invite-password" error={errors['password']} hint="At least 12 characters">
            <input
              type="password"
              {...inputProps('invite-password', errors['password'])}
              autocomplete="new-password"
              value={password}
              onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
            />
          </Field>
        </>
      )}
      <FormError error={accept.error} fields={['name', 'password']} />
      <button type="submit" disabled={accept.busy}>
        Accept invitation
      </button>
    </form>
  );
}
