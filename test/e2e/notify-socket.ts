// A stand-in for systemd's NOTIFY_SOCKET (an AF_UNIX datagram socket, which Node cannot bind) served by python3.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { createFeed, type Feed } from "./feed.js";

/** Receives datagrams like systemd does (closing passed fds, so `systemd-notify`'s BARRIER=1 returns). */
const LISTENER = `
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("listening", flush=True)
while True:
    data, anc, _flags, _addr = s.recvmsg(4096, socket.CMSG_SPACE(64))
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
            for fd in fds:
                os.close(fd)
    print(data.decode().replace("\\n", "|"), flush=True)
`;

/** True when this machine can run the notify test (python3 for the socket, systemd-notify to send). */
export const notifyToolsAvailable =
  spawnSync("python3", ["--version"]).status === 0 && spawnSync("systemd-notify", ["--help"]).status === 0;

/** A listening notify socket; each datagram is one feed item with its lines joined by `|`. */
export interface NotifySocket {
  readonly messages: Feed<string>;
  close(): void;
}

const listeners = new Set<ChildProcess>();

/** Bind a datagram socket at `path` and wait until it listens. */
export async function listenNotifySocket(path: string): Promise<NotifySocket> {
  const child = spawn("python3", ["-c", LISTENER, path], { stdio: ["ignore", "pipe", "inherit"] });
  listeners.add(child);
  const messages = createFeed<string>();
  createInterface({ input: child.stdout }).on("line", (line) => messages.push(line));
  child.once("exit", (code) => messages.end(`notify listener exited with ${code}`));
  await messages.waitFor((line) => line === "listening", { timeoutMs: 5_000, what: "the notify socket" });
  return {
    messages,
    close: () => {
      child.kill("SIGKILL");
      listeners.delete(child);
    },
  };
}

/** Kill every listener a test left running (afterEach). */
export function closeNotifySockets(): void {
  for (const child of listeners) child.kill("SIGKILL");
  listeners.clear();
}
