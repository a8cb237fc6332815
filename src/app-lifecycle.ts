// Stopping and reloading a running daemon.
import type { Server } from "node:http";
import type { AppConfig } from "./config/types.js";
import { resolveOrphanSinkErrors } from "./app-restore.js";
import { reloadUpstream } from "./upstream-reload.js";
import { type Daemon, maintenanceOf, requireHub, ruleNames, type StopReport } from "./app-daemon.js";
import { logWarmupNotes } from "./app-pipeline.js";
import { checkpoint } from "./app-state.js";
import { streamClientDeps } from "./app-upstream.js";

/** Graceful stop, every step in its own try/catch; the report names the steps that failed. */
export async function stopApp(app: Daemon, deadlineMs: number): Promise<StopReport> {
  const { logger, nowMs } = app.deps;
  const deadline = nowMs() + deadlineMs;
  const remaining = (): number => Math.max(0, deadline - nowMs());
  const failedSteps: string[] = [];
  const step = async (name: string, action: () => unknown): Promise<void> => {
    try {
      await action();
    } catch (error) {
      failedSteps.push(name);
      logger.error({ step: name, err: error }, `error while stopping: ${name}`);
    }
  };
  // after a failed start nothing ran: no `stopping` event for a daemon that never announced `started`
  if (app.started) await step("hub", () => app.hub?.publishLifecycle("stopping"));
  app.started = false;
  for (const timer of app.timers.splice(0)) clearInterval(timer);
  app.loopMonitor?.stop();
  app.silencer?.stop();
  await step("pipeline", () => app.runner?.stop());
  await step("journal", () => app.clusterJournal?.stop(Math.min(remaining(), 2_000)));
  await step("cluster", () => app.cluster?.stop());
  await step("recording", () => app.recording?.writer.close());
  await step("chatops", () => app.chatops?.stop(remaining()));
  await step("ws", () => app.ws?.close(Math.min(remaining(), 2_000)));
  await step("http", () => closeServer(app.httpServer));
  await step("checkpoint", () => checkpoint(app));
  await step("state", () => app.store?.close()); // fsyncs the journal and releases the lock even if the checkpoint failed
  await step("simulator", () => app.simulator?.close());
  await step("upstream", () => app.dispatcher?.close());
  app.logSink?.unsubscribe();
  app.hub?.complete();
  return { failedSteps };
}

/** Apply a new, already validated config: targets, rules, transports and sinks when they changed; the rest on restart. */
export async function reloadApp(app: Daemon, next: AppConfig): Promise<void> {
  const previous = app.config;
  app.config = next;
  app.knownRules = ruleNames(next);
  const { dispatcher } = app;
  const upstreamOnRestart =
    dispatcher === undefined
      ? []
      : reloadUpstream(app.runner, previous.upstream, next.upstream, {
          ...streamClientDeps(app, dispatcher),
          logger: app.log("upstream"),
        });
  app.runner?.update(next.monitors, next.rules);
  logWarmupNotes(app, next, previous);
  app.cluster?.member.refresh();
  app.cluster?.shared.configLoaded();
  if (JSON.stringify(previous.maintenance) !== JSON.stringify(next.maintenance))
    app.silencer?.setMaintenance(maintenanceOf(next));
  if (JSON.stringify(previous.sinks) !== JSON.stringify(next.sinks)) {
    await app.chatops?.reconfigure(next.sinks, Math.min(next.shutdown.drainTimeoutMs, 5_000));
    const hub = requireHub(app);
    const firingSinkErrors = hub.activeAlerts().filter((alert) => alert.rule === "sink_error");
    resolveOrphanSinkErrors(hub, firingSinkErrors, next.sinks, app.deps.nowMs());
  }
  const restartOnly = [
    ...(["server", "state", "recording", "cluster"] as const).filter(
      (key) => JSON.stringify(previous[key]) !== JSON.stringify(next[key]),
    ),
    ...upstreamOnRestart,
  ];
  if (restartOnly.length > 0)
    app.deps.logger.warn({ sections: restartOnly }, "these sections change only on restart");
  app.configGeneration += 1;
  requireHub(app).publishLifecycle("config_reloaded", {
    targets: app.runner?.targetIds().length ?? 0,
    rules: next.rules.length,
  });
}

/** Close an HTTP server, resolving when it has stopped (idle keep-alive sockets closed). */
function closeServer(server: Server | undefined): Promise<void> {
  if (server === undefined || !server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
