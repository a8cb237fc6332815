// The daemon's recording (the `recording` config block, or `pragma-monitor record`): a writer and the recorder its hooks call.
import type { Logger } from "pino";
import type { RecordingConfig } from "../config/types.js";
import type { Metrics } from "../metrics.js";
import { createRecorder, type Recorder } from "./recorder.js";
import { createRecordingWriter, type RecordingWriter } from "./writer.js";

/** A recording in progress. */
export interface DaemonRecording {
  readonly recorder: Recorder;
  readonly writer: RecordingWriter;
}

/** Open the recording the config asks for (undefined when `recording.enabled` is false). */
export function openDaemonRecording(
  config: RecordingConfig,
  deps: {
    readonly nowMs: () => number;
    readonly logger: Logger;
    readonly metrics: Pick<Metrics, "recordingLines">;
  },
): DaemonRecording | undefined {
  if (!config.enabled) return undefined;
  const { metrics } = deps;
  const writer = createRecordingWriter({
    dir: config.dir,
    maxFileBytes: config.maxFileBytes,
    maxFiles: config.maxFiles,
    maxBufferedBytes: config.maxBufferedBytes,
    nowMs: deps.nowMs,
    logger: deps.logger,
    onLine: (outcome) => metrics.recordingLines.inc({ outcome }),
  });
  deps.logger.info({ dir: config.dir }, "recording upstream responses");
  return { recorder: createRecorder((line) => writer.write(line), deps.nowMs), writer };
}
