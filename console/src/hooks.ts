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
 *
 * When the write ends, the eye is led: a refusal moves focus (and the page) to the first field
 * it names, else to its alert, in the form the write was started from; a write that succeeded
 * on the same page gives focus back to what had it, which the disabled button had dropped to
 * the page's body.
 */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [ended, setEnded] = useState(0);
  const startedFrom = useRef<Element | null>(null);
  useEffect(() => {
    if (ended === 0) return;
    // After what the caller does once the write returns (an emptied form disables its button).
    const timer = setTimeout(() => leadTheEye(startedFrom.current, error !== null), 0);
    return () => clearTimeout(timer);
  }, [ended]);
  const run = async <T>(write: () => Promise<Result<T>>): Promise<{ ok: boolean; error: unknown; data: T | undefined }> => {
    startedFrom.current = document.activeElement;
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
      setEnded((n) => n + 1);
    }
  };
  return { error, busy, run, clear: () => setError(null) };
}

const ERROR_TARGETS = '[aria-invalid="true"], [role="alert"]';

/**
 * Focus after a write: on a refusal, the first invalid field or alert of the form it came from
 * (a confirmation dialog's form is closed by then: the page's main region is searched instead);
 * on success, back to where it was if nothing else took it (or its form's first field).
 */
export function leadTheEye(startedFrom: Element | null, refused: boolean): void {
  if (refused) {
    const form = startedFrom?.closest('form:not([method="dialog"])');
    const target = (form?.isConnected ? form.querySelector<HTMLElement>(ERROR_TARGETS) : null) ?? document.querySelector<HTMLElement>(`main ${ERROR_TARGETS.split(', ').join(', main ')}`);
    if (target) return focusAndShow(target);
  }
  const lost = document.activeElement === null || document.activeElement === document.body;
  if (!lost || !(startedFrom instanceof HTMLElement) || !startedFrom.isConnected) return;
  startedFrom.focus();
  // A button that stays disabled (an emptied form's submit) cannot hold focus: the form's first
  // field takes it, ready for the next entry.
  if (document.activeElement !== startedFrom)
    startedFrom.closest('form')?.querySelector<HTMLElement>('input:not([disabled]):not([type="hidden"]), textarea:not([disabled]), select:not([disabled])')?.focus();
}

/** Focus that also brings the element into view, where a message is read before it is acted on. */
export function focusAndShow(target: HTMLElement): void {
  // An alert is a paragraph: focusable by script only, never a stop of the Tab key.
  if (!target.matches('input, select, textarea, button, a[href], [tabindex]')) target.tabIndex = -1;
  target.focus({ preventScroll: true });
  target.scrollIntoView({ block: 'center', behavior: 'instant' as ScrollBehavior });
}

const tickers = new Set<() => void>();
let tickTimer: ReturnType<typeof setInterval> | undefined;

/**
 * Re-renders the caller every 30 s, so that "3 minutes ago" does not stay on screen for an hour;
 * one timer for the whole page, stopped when nothing on it shows a relative time.
 */
export function useTick(): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    const tick = () => setTick((n) => n + 1);
    tickers.add(tick);
    tickTimer ??= setInterval(() => tickers.forEach((f) => f()), 30_000);
    return () => {
      tickers.delete(tick);
      if (tickers.size === 0 && tickTimer !== undefined) {
        clearInterval(tickTimer);
        tickTimer = undefined;
      }
    };
  }, []);
}
