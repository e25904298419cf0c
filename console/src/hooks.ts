/**
 * The console's hooks: loading a resource with its error (once, page by page, or again while
 * work is under way) and running a write for a form. None of them talks to the server but
 * through the SDK client of ./api.ts, whose answers they pass on with their types.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

type Result<T> = { data?: T; error?: unknown };

/**
 * Loads what `fetcher` answers, again whenever `deps` change or `reload()` is called; a failed
 * load keeps no stale data on screen.
 */
export function useLoad<T>(fetcher: () => Promise<Result<T>>, deps: unknown[]) {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    const res: Result<T> = await fetcher().catch((error: unknown) => ({ error: { errors: [{ message: String(error) }] } }));
    if (mine !== generation.current) return;
    if (res.error !== undefined) setState({ data: null, error: res.error, loading: false });
    else setState({ data: res.data ?? null, error: null, loading: false });
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { ...state, reload };
}

/** Calls `reload` every `ms` while `active`: a list with work under way (a pending delivery) stays current by itself. */
export function useRefreshWhile(active: boolean, reload: () => unknown, ms = 2000) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void reload(), ms);
    return () => clearInterval(timer);
  }, [active, reload, ms]);
}

type Page<T> = { data: T[]; next_cursor: string | null };

/**
 * A list read page by page: the first page on load (and on `reload`), the next ones appended by
 * `more()` while the server says there are more.
 */
export function usePaged<T>(fetchPage: (cursor: string | undefined) => Promise<Result<Page<T>>>, deps: unknown[]) {
  const first = useLoad(() => fetchPage(undefined), deps);
  const [older, setOlder] = useState<{ rows: T[]; cursor: string | null; error: unknown } | null>(null);
  useEffect(() => setOlder(null), [first.data]);
  const cursor = older ? older.cursor : (first.data?.next_cursor ?? null);
  const more = async () => {
    if (!cursor) return;
    const res = await fetchPage(cursor);
    if (res.error || !res.data) return setOlder((o) => ({ rows: o?.rows ?? [], cursor, error: res.error }));
    const page = res.data;
    setOlder((o) => ({ rows: [...(o?.rows ?? []), ...page.data], cursor: page.next_cursor, error: null }));
  };
  const rows = first.data ? [...first.data.data, ...(older?.rows ?? [])] : null;
  return { load: first, rows, hasMore: cursor !== null, more, moreError: older?.error ?? null, reload: first.reload };
}

/**
 * Runs a write, keeping its error for the form; answers whether it succeeded, its error, and
 * what the server answered (typed as the call's answer; absent when it failed or had no body).
 */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async <T>(write: () => Promise<Result<T>>): Promise<{ ok: boolean; error: unknown; data: T | undefined }> => {
    setBusy(true);
    try {
      const res = await write();
      setError(res.error ?? null);
      return { ok: res.error === undefined, error: res.error ?? null, data: res.data };
    } catch (e) {
      const failure = { errors: [{ message: String(e) }] };
      setError(failure);
      return { ok: false, error: failure, data: undefined };
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, clear: () => setError(null) };
}
