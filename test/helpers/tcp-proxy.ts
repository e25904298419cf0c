import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between a server and PostgreSQL (or anything else), for fault tests:
 * it forwards both ways, and on demand delays every chunk, stalls (stops forwarding, keeps every
 * connection open, buffers nothing onwards), or cuts every open connection (both sides reset).
 */
export interface TcpProxy {
  port: number;
  /** Connections open now (pairs of client and upstream sockets). */
  readonly open: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Each chunk, either way, is delivered this much later (order kept); 0 restores. */
  setLatency(ms: number): void;
  /** Stops forwarding either way, new connections included, until `resume`; nothing is closed. */
  stall(): void;
  /** Forwards again, delivering what was held during the stall. */
  resume(): void;
  /** Resets every open connection, both sides; returns how many were cut. */
  cut(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let latencyMs = 0;
  let stalled = false;
  let accepted = 0;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  /** What each direction's queue waits on during a stall (one per direction, at most). */
  const held: (() => void)[] = [];

  const forward = (from: net.Socket, to: net.Socket) => {
    // One queue per direction keeps the order when latency changes in the middle.
    let chain = Promise.resolve();
    from.on('data', (chunk) => {
      const deliver = () => {
        if (!to.destroyed) to.write(chunk);
      };
      const delay = latencyMs;
      chain = chain.then(async () => {
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        if (stalled) await new Promise<void>((r) => held.push(r));
        deliver();
      });
    });
  };

  /** Every socket not closed yet, whatever its pair's state: `close` destroys each. */
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    return socket;
  };
  const server = net.createServer((client) => {
    accepted++;
    track(client);
    const upstream = track(net.connect(targetPort, targetHost));
    const pair = { client, upstream };
    pairs.add(pair);
    // Either side gone: the other goes too, as a real network path closing would show it.
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
    forward(client, upstream);
    forward(upstream, client);
  });
  /** Resets every open connection, both sides. */
  const cut = () => {
    const n = pairs.size;
    for (const { client, upstream } of [...pairs]) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    pairs.clear();
    return n;
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    port,
    get open() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const release of held.splice(0)) release();
    },
    cut,
    async close() {
      // Closed, not reset: sockets reset (resetAndDestroy) here, as their peer (a killed server)
      // reset them too, sometimes never finished closing, and Node's exit-time cleanup of
      // handles (FreeEnvironment -> CleanupHandles, seen in gdb) then spun until the file's
      // timeout killed the test's process, its tests all passed.
      for (const socket of sockets) socket.destroy();
      pairs.clear();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
