import net from 'node:net';

export interface PublicAddress {
  /** `http://127.0.0.1:<port>`: for WSP_PUBLIC_URL (config.publicUrl), known before the server starts. */
  url: string;
  /** From now on every connection (and any that arrived before) goes to the server at `serverUrl`. */
  forwardTo(serverUrl: string): void;
  close(): Promise<void>;
}

/**
 * A public address for a server whose own port is known only once it listens on port 0: a
 * listener this process binds first, on a port the kernel picks and this process keeps until
 * `close()`, that forwards each connection to the server, as the reverse proxy in front of a
 * real deployment does. So a test can name the address in WSP_PUBLIC_URL before the server
 * starts without probing a free port, closing it and starting the server on it (a race with
 * every other process binding ports meanwhile).
 */
export async function publicAddress(): Promise<PublicAddress> {
  let resolveTarget!: (t: { host: string; port: number }) => void;
  const target = new Promise<{ host: string; port: number }>((resolve) => (resolveTarget = resolve));
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const listener = net.createServer((client) => {
    track(client);
    client.pause();
    void target.then(({ host, port }) => {
      if (client.destroyed) return;
      const upstream = net.connect({ host, port });
      track(upstream);
      // Either side closing or failing ends the other: the forwarder adds no state of its own.
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = listener.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo(serverUrl: string) {
      const u = new URL(serverUrl);
      resolveTarget({ host: u.hostname, port: Number(u.port) });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
