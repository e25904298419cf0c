import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../api.js';

type Dashboard = { id: string; name: string; description: string | null; purpose: string; widgets: unknown[]; updated_at: number };

/** The workspace's dashboards, newest first. */
export function Dashboards({ workspace }: { workspace: { id: string; name: string } | null }) {
  const [rows, setRows] = useState<Dashboard[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setRows(null);
    void api.GET('/v1/dashboards', { params: { query: { limit: 100 } } }).then((res) => {
      if (res.error) return setError(messageOf(res.error));
      setError(null);
      setRows(res.data.data as Dashboard[]);
    });
  }, [workspace?.id]);
  return (
    <section aria-labelledby="dashboards-title">
      <h1 id="dashboards-title">Dashboards{workspace ? ` in ${workspace.name}` : ''}</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {rows === null && !error && <p role="status">Loading dashboards…</p>}
      {rows?.length === 0 && <p class="empty">No dashboards yet. Create one with POST /v1/dashboards or `wsp dashboards`.</p>}
      {rows && rows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Purpose</th>
              <th scope="col">Widgets</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id}>
                <td>{d.name}</td>
                <td>{d.purpose.replace('_', ' ')}</td>
                <td>{d.widgets.length}</td>
                <td><time dateTime={new Date(d.updated_at * 1000).toISOString()}>{new Date(d.updated_at * 1000).toLocaleString()}</time></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
