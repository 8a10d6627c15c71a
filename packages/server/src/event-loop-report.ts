/**
 * This process's event-loop delay, reported to the parent process that started it with an IPC
 * channel — only a parent has one, so nothing is exposed on the network. The fuzzer and the
 * event-loop benchmark use it to check the budget: no request may hold the event loop for more
 * than 50 ms.
 *
 * The parent sends `{ type: "acs:event-loop", reset?: true }`; the answer is
 * `{ type: "acs:event-loop", maxMs, p99Ms, p50Ms, meanMs, samples }` over the delays since the last
 * reset (or the start), sampled every 5 ms.
 *
 * On a busy machine the delay also counts the time the thread waited for a CPU. On Linux the answer
 * separates the two from /proc/thread-self/schedstat: `busyMaxMs` and `busyP99Ms` are the CPU time
 * the request thread ran between two 5 ms ticks — what its own work held the loop, however busy the
 * machine — and `runQueueWaitMs` the time it was ready to run but waited for a CPU.
 */
import { readFileSync } from "node:fs";
import { createHistogram, monitorEventLoopDelay } from "node:perf_hooks";

export const EVENT_LOOP_MESSAGE = "acs:event-loop";

export interface EventLoopDelay {
  type: typeof EVENT_LOOP_MESSAGE;
  maxMs: number;
  p99Ms: number;
  p50Ms: number;
  meanMs: number;
  samples: number;
  /** Linux only: the longest CPU run of the request thread between two ticks, ms. */
  busyMaxMs?: number;
  busyP99Ms?: number;
  /** Linux only: time the request thread waited for a CPU, ms. */
  runQueueWaitMs?: number;
}

const SCHEDSTAT = "/proc/thread-self/schedstat";

/** This thread's CPU time and run-queue wait, ns (Linux), or undefined. */
function schedstat(): [number, number] | undefined {
  try {
    const [run, wait] = readFileSync(SCHEDSTAT, "utf8").split(" ").map(Number);
    return run !== undefined && wait !== undefined ? [run, wait] : undefined;
  } catch {
    return undefined;
  }
}

/** Starts answering the parent's event-loop questions; a no-op without an IPC channel. */
export function reportEventLoopDelay(): void {
  if (typeof process.send !== "function") return;
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const ms = (ns: number) => Number((ns / 1e6).toFixed(3));
  // The request thread's CPU runs between ticks (the timer cannot fire while a task runs).
  const busy = createHistogram();
  let last = schedstat();
  let waitSince = last?.[1] ?? 0;
  if (last) {
    setInterval(() => {
      const now = schedstat();
      if (!now || !last) return;
      busy.record(Math.max(1, now[0] - last[0]));
      last = now;
    }, 5).unref();
  }
  process.on("message", (message: { type?: unknown; reset?: unknown }) => {
    if (message?.type !== EVENT_LOOP_MESSAGE) return;
    const answer: EventLoopDelay = {
      type: EVENT_LOOP_MESSAGE,
      maxMs: ms(histogram.max),
      p99Ms: ms(histogram.percentile(99)),
      p50Ms: ms(histogram.percentile(50)),
      meanMs: ms(histogram.mean),
      samples: histogram.count,
      ...(last && { busyMaxMs: ms(busy.max), busyP99Ms: ms(busy.percentile(99)), runQueueWaitMs: ms(last[1] - waitSince) }),
    };
    if (message.reset === true) {
      histogram.reset();
      busy.reset();
      waitSince = last?.[1] ?? 0;
    }
    process.send?.(answer);
  });
  process.channel?.unref(); // the channel never keeps the process alive
}
