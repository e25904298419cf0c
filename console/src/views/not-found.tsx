export function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing lives at this address. <a href="/console/dashboards">Go to the dashboards</a>.
      </p>
    </section>
  );
}
