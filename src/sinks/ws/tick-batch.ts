// Coalesces one tick's fan-out writes per socket: a burst of events reaches each client in two TCP writes, not one per event.
//
// The first event of a tick is written at once, so a lone event's latency is untouched. The sockets that later
// events of the same tick write to are corked and flushed together when the tick ends (process.nextTick), so the
// client reads the rest of the burst in one go: with `ws` library clients, per-read work (stream, parser, events) is
// most of a small frame's cost. The bytes on the wire, their order and the frames are the same.
import type { Writable } from "node:stream";

/** Bytes held corked on one socket past which it is flushed early (the slow-consumer check counts held bytes). */
const MAX_HELD_BYTES = 16 * 1024;

/** The fan-out's write batching for the current tick. */
export interface TickBatch {
  /** Called once per fan-out event: whether its writes are to be held (it is not the tick's first event). */
  startEvent(): boolean;
  /** Hold `stream`'s writes until the tick ends (corked once per tick; flushed early past MAX_HELD_BYTES). */
  hold(stream: Writable): void;
}

/** A batch that flushes what it holds at the end of each tick in which it held something. */
export function createTickBatch(): TickBatch {
  const held: Writable[] = [];
  let eventsThisTick = 0;
  const endTick = (): void => {
    eventsThisTick = 0;
    for (const stream of held) stream.uncork();
    held.length = 0;
  };
  return {
    startEvent() {
      eventsThisTick += 1;
      if (eventsThisTick === 1) process.nextTick(endTick);
      return eventsThisTick > 1;
    },
    hold(stream) {
      // nothing else leaves a socket corked between calls (`ws` corks and uncorks within one send)
      if (stream.writableCorked === 0) {
        stream.cork();
        held.push(stream);
      } else if (stream.writableLength >= MAX_HELD_BYTES) {
        stream.uncork();
        stream.cork();
      }
    },
  };
}
