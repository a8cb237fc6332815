// The connection pool the client runs on: an undici Agent with a bounded pool per origin and keep-alive.
import { Agent, type Dispatcher } from "undici";

/** Pool settings; the defaults suit polling a few hundred targets against one origin. */
export interface DispatcherOptions {
  /** Maximum sockets per origin (requests beyond wait in undici's queue). */
  readonly connections: number;
  /** Idle time after which a kept-alive socket is closed. */
  readonly keepAliveTimeoutMs?: number;
  /** Upper bound on a server-suggested keep-alive (Keep-Alive: timeout=...). */
  readonly keepAliveMaxTimeoutMs?: number;
  /** TCP + TLS connect timeout. */
  readonly connectTimeoutMs?: number;
}

/** Build an undici Agent with a bounded pool and keep-alive; the caller closes it on shutdown. */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  if (!Number.isSafeInteger(options.connections) || options.connections < 1) {
    throw new RangeError(`connections must be a positive integer, got ${options.connections}`);
  }
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? 4_000;
  return new Agent({
    connections: options.connections,
    keepAliveTimeout: keepAliveTimeoutMs,
    keepAliveMaxTimeout: Math.max(keepAliveTimeoutMs, options.keepAliveMaxTimeoutMs ?? 60_000),
    connect: { timeout: options.connectTimeoutMs ?? 10_000 },
  });
}
