import http from 'node:http';

/** A Server-Sent Events answer as a client reads it over real HTTP (test/notifications/stream*.test.ts). */
export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Events received so far: id and parsed data. */
  events: { id: string; event: string; data: { id: string; title: string } }[];
  /** Comment lines (`: ...`) received so far, without the colon. */
  comments: string[];
  /** Everything received so far (the JSON error envelope of a refused stream). */
  text: string;
  /** Whether the server has ended the answer (or the connection closed). */
  isEnded(): boolean;
  ended: Promise<void>;
  close(): void;
}

/** Opens `GET url` with `Accept: text/event-stream` and parses what arrives; resolves once the status line is in. */
export function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    // An empty value leaves the header out (a client that sends no Accept at all).
    const sent = Object.fromEntries(Object.entries({ accept: 'text/event-stream', ...headers }).filter(([, v]) => v !== ''));
    const req = http.get(url, { headers: sent, agent: false }, (res) => {
      let buffer = '';
      let ended = false;
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        text: '',
        isEnded: () => ended,
        ended: new Promise((r) =>
          res.on('close', () => {
            ended = true;
            r();
          }),
        ),
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        stream.text += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) stream.comments.push(line.slice(1).trim());
            else if (line.includes(': ')) fields[line.slice(0, line.indexOf(': '))] = line.slice(line.indexOf(': ') + 2);
          }
          if (fields.data) stream.events.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) });
        }
      });
      res.on('error', () => {});
      resolve(stream);
    });
    req.on('error', reject);
  });
}
