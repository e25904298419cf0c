import { useEffect, useState } from 'preact/hooks';
import type { Operation } from '@workspace-platform/sdk';
import { api } from './api.js';

/**
 * Long work (a render, a restore, a machine's suspension) as a line that says it is under way
 * and then how it ended; `onDone` lets the view load what changed.
 */
export function OperationProgress({ id, onDone }: { id: string; onDone?: () => void }) {
  const [op, setOp] = useState<Operation | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      const res = await api.GET('/v1/operations/{id}', { params: { path: { id } } });
      if (stopped) return;
      const now = res.data ?? null;
      setOp(now);
      if (now?.done) onDone?.();
      else timer = setTimeout(poll, 750);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id]);
  if (!op || !op.done) {
    return (
      <p role="status" class="progress">
        <span class="spinner" aria-hidden="true" /> {op ? op.kind.replace(/[._]/g, ' ') : 'Working'}: under way…
      </p>
    );
  }
  return op.error ? (
    <p role="alert" class="error">
      {op.kind.replace(/[._]/g, ' ')} failed: {op.error.message}
    </p>
  ) : (
    <p role="status" class="done">
      {op.kind.replace(/[._]/g, ' ')}: done.
    </p>
  );
}
