// A loopback TCP proxy in front of the simulator that can reset every connection (RST), to inject connection resets.
import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/** The running proxy: `pass` forwards bytes, `reset` answers every connection (and kills open ones) with RST. */
export interface ResetProxy {
  readonly url: string;
  setMode(mode: "pass" | "reset"): void;
  /** Connections reset so far. */
  readonly resets: number;
  close(): Promise<void>;
}

/** Start a proxy on 127.0.0.1:0 forwarding to 127.0.0.1:`targetPort`. */
export async function startResetProxy(targetPort: number): Promise<ResetProxy> {
  let mode: "pass" | "reset" = "pass";
  let resets = 0;
  const open = new Set<Socket>();
  const reset = (socket: Socket): void => {
    resets += 1;
    socket.resetAndDestroy();
  };
  const server: Server = createServer((client) => {
    client.on("error", () => undefined);
    if (mode === "reset") return reset(client);
    const upstream = connect(targetPort, "127.0.0.1");
    upstream.on("error", () => client.destroy());
    open.add(client);
    client.once("close", () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.once("close", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setMode(next) {
      mode = next;
      if (next === "reset") for (const socket of open) reset(socket);
    },
    get resets() {
      return resets;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
