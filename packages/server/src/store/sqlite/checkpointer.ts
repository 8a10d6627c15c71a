/** WAL checkpoints on a worker thread (BackgroundCheckpointer), and the sizes that pace them. */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * The connection's own checkpoint (in the committing write, waiting on fsync) runs when the WAL
 * passes this size. It copies the whole WAL on the request thread (hundreds of ms for 128 MB), so
 * while the background checkpointer works it is only a backstop (WAL_BACKSTOP_BYTES); when the
 * checkpointer fails, the writer checkpoints at WAL_AUTOCHECKPOINT_BYTES again.
 */
export const WAL_AUTOCHECKPOINT_BYTES = 128 * 1024 * 1024;
export const WAL_BACKSTOP_BYTES = 1024 * 1024 * 1024;
/** Event JSON committed between two requests to the background checkpointer. */
const CHECKPOINT_REQUEST_BYTES = 1024 * 1024;
/**
 * Commits between two requests, whatever their size. A commit of one small event still writes
 * about ten 8 KiB pages to the WAL (the event, its indexes, its id, its message text and FTS
 * entry), so counting JSON bytes alone let small appends grow the WAL by ~85 KB per commit to the
 * 1 GB backstop, where the writer checkpointed and truncated it on the request thread (200–500 ms,
 * found by the fuzzer's WebSocket floods). 64 commits keep each checkpoint to a few MB.
 */
const CHECKPOINT_REQUEST_COMMITS = 64;
/** WAL frames (8 KiB pages: 16 MB) past which the checkpointer starts the WAL over (RESTART). */
const WAL_RESTART_FRAMES = 2048;
/** RESTART attempts, a millisecond apart, while the writer or a reader holds the WAL; then the next request tries again. */
const RESTART_TRIES = 200;

/**
 * The worker's code (CommonJS, run with `eval`: no separate file to ship or bundle). Requests
 * that queued up while a checkpoint ran are served by one more checkpoint, not one each.
 */
const CHECKPOINT_WORKER = `
const { parentPort, receiveMessageOnPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
// No busy handler: it sleeps in growing steps while the writer commits again and again, and the
// WAL grows meanwhile. A RESTART is tried at once, again every millisecond while the writer or a
// reader holds the WAL, for up to restartTries milliseconds.
db.pragma("busy_timeout = 0");
const pause = new Int32Array(new SharedArrayBuffer(4));
function restart() {
  for (let i = 0; i < workerData.restartTries; i++) {
    if (db.pragma("wal_checkpoint(RESTART)")[0].busy === 0) return;
    Atomics.wait(pause, 0, 0, 1);
  }
}
parentPort.on("message", (message) => {
  let closing = message === "close";
  for (let next; !closing && (next = receiveMessageOnPort(parentPort)); ) closing = next.message === "close";
  if (closing) {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [{ log, checkpointed }] = db.pragma("wal_checkpoint(PASSIVE)");
    // Under steady writes a PASSIVE checkpoint never ends level with the WAL, so the writer never
    // starts it over and it grows to the backstop. Once it is long, start it over from here: the
    // frames left are few, so the writer waits for them briefly, and the file never grows past
    // journal_size_limit (cutting it back is what cost the request thread).
    if (log >= workerData.restartFrames && checkpointed === log) restart();
  } catch {
    // Busy, or failed: the next request tries again, and the writer's backstop still bounds the WAL.
  }
});
`;

/**
 * Copies the WAL into the database on a worker thread with its own connection, so that ingest
 * does not wait for it. A checkpoint reads every new WAL frame, writes it to the database file
 * and fsyncs both; run by the committing connection (SQLite's wal_autocheckpoint) it was ~10% of
 * replay ingest at 1M events plus ~7% waiting on fsync (+20% without it). A PASSIVE checkpoint
 * runs alongside the writer and its readers (WAL allows it) and never blocks them; the WAL stays
 * durable across a crash at any point of it. The worker starts after CHECKPOINT_REQUEST_BYTES of
 * event JSON; the writer's wal_autocheckpoint remains as a backstop on the WAL's size.
 */
export class BackgroundCheckpointer {
  private worker: Worker | undefined;
  private failed = false;
  private pendingBytes = 0;
  private pendingCommits = 0;

  /** @param onFailure called once when there will be no background checkpoints (the writer takes over) */
  constructor(
    private readonly file: string,
    private readonly onFailure: () => void,
  ) {}

  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    this.onFailure();
  }

  /** After a committed write of `bytes` of event JSON. */
  committed(bytes: number): void {
    this.pendingBytes += bytes;
    this.pendingCommits++;
    if ((this.pendingBytes < CHECKPOINT_REQUEST_BYTES && this.pendingCommits < CHECKPOINT_REQUEST_COMMITS) || this.failed) return;
    this.pendingBytes = 0;
    this.pendingCommits = 0;
    try {
      this.worker ??= this.start();
      this.worker.postMessage("checkpoint");
    } catch {
      // No worker thread to be had: the write has committed all the same, and the writer's
      // wal_autocheckpoint does the work.
      this.fail();
    }
  }

  private start(): Worker {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(CHECKPOINT_WORKER, { eval: true, workerData: { driver, file: this.file, restartFrames: WAL_RESTART_FRAMES, restartTries: RESTART_TRIES } });
    worker.unref(); // never keeps the process alive
    worker.on("error", () => {
      // Cannot open the file, say: leave checkpoints to the writer's wal_autocheckpoint.
      this.fail();
      this.worker = undefined;
    });
    return worker;
  }

  /** The worker closes its connection and ends; a checkpoint in progress finishes first. */
  close(): void {
    this.worker?.postMessage("close");
    this.worker = undefined;
    this.failed = true;
  }
}
