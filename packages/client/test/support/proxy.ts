/**
 * A real TCP proxy between clients and a server, for network trouble on demand: cut connections
 * (a transient close) or stop forwarding to the clients (a slow network). Not a stand-in for any
 * component: the bytes are the server's own.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

interface TcpProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  url: string;
  /** Pairs open now. */
  readonly open: number;
  /** Destroys `count` random open connections (both sides), as a network failure would. */
  cutRandom(count: number, random?: () => number): number;
  /** Stops (true) or resumes (false) reading from the server side: the server's sends back up. */
  stall(stalled: boolean): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let stalled = false;
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (stalled) upstream.pause();
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get open() {
      return pairs.size;
    },
    cutRandom(count, random = Math.random) {
      const list = [...pairs];
      let cut = 0;
      for (let i = 0; i < count && list.length; i++) {
        const [pair] = list.splice(Math.floor(random() * list.length), 1);
        pair!.client.destroy();
        pair!.upstream.destroy();
        cut++;
      }
      return cut;
    },
    stall(value) {
      stalled = value;
      for (const { upstream } of pairs) {
        if (value) {
          upstream.unpipe();
          upstream.pause();
        } else {
          const pair = [...pairs].find((p) => p.upstream === upstream)!;
          upstream.pipe(pair.client);
          upstream.resume();
        }
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
