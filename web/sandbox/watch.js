// The channel's two watches on a worker it cannot otherwise see into: the heartbeat
// (while requests wait, does the frame still answer a ping?) and the busy watch (does
// the worker say `received` for the request first in line?). Either one, when it finds
// the frame dead or the worker stuck, calls `recover` (recovery.js, through the
// Sandbox). One part the channel (channel.js) owns; it reads the channel's order of
// calls and its frame ping, nothing else.

/** @typedef {import("./channel.js").Recover} Recover */
/** @typedef {Pick<import("./channel.js").SandboxChannel, "rpc" | "closed" | "replacing" | "frameAlive">} Watched */

const HEARTBEAT_MS = 5_000;
// A worker with nothing else to do says `received` for a request within milliseconds.
// One that does not, while that request is the first in line, is busy with work a cell
// left behind (a setTimeout or setInterval loop, an asyncio task that never awaits):
// it would never start the request (the third outside attack waited 120 s). Replaced.
const BUSY_MS = 4_000;
const DEAD_FRAME = "The sandbox stopped responding (its renderer may have run out of memory or been ended by the system)";

export class ChannelWatch {
  /** @param {{channel: Watched, recover: Recover}} options */
  constructor({ channel, recover }) {
    this.channel = channel;
    this.recover = recover;
    /** @type {Set<number>} the current worker's requests it said it has received */
    this.received = new Set();
    /** @type {{id: number, timer: ReturnType<typeof setTimeout>} | null} the busy watch on the head */
    this.busyWatch = null;
    /** @type {ReturnType<typeof setInterval> | null} */
    this.heartbeat = null;
  }

  /** A new worker: none of its requests received yet. */
  reset() {
    this.received = new Set();
    this.watchHead();
  }

  /** The worker said it has the request `id` (any id it got, before its queue). @param {number} id */
  markReceived(id) {
    this.received.add(id);
    if (this.busyWatch && this.busyWatch.id === id) this.watchHead();
  }

  /** Shut down for good: no more checks. */
  stop() {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.busyWatch) clearTimeout(this.busyWatch.timer);
    this.busyWatch = null;
  }

  /** While requests wait, check now and then that the frame is still there. */
  startHeartbeat() {
    if (this.heartbeat) return;
    const channel = this.channel;
    let checking = false;
    this.heartbeat = setInterval(async () => {
      if (checking || channel.closed || channel.replacing || !channel.rpc.pending.size) return;
      checking = true;
      try {
        if (!(await channel.frameAlive()) && !channel.closed && !channel.replacing) {
          this.recover("crash", DEAD_FRAME);
        }
      } finally {
        checking = false;
      }
    }, HEARTBEAT_MS);
  }

  /** Watch the request first in line (not a boot): if the worker does not say it has
   * received it within BUSY_MS, the worker is busy with a cell's leftovers: replaced. */
  watchHead() {
    const channel = this.channel;
    const head = channel.rpc.head;
    if (this.busyWatch && this.busyWatch.id === head) return;
    if (this.busyWatch) clearTimeout(this.busyWatch.timer);
    this.busyWatch = null;
    if (head === undefined || head === 0 || this.received.has(head) || channel.closed) return;
    const timer = setTimeout(async () => {
      this.busyWatch = null;
      const stuck = () => channel.rpc.head === head && !this.received.has(head) && !channel.replacing && !channel.closed;
      if (!stuck()) return;
      // A dead frame answers nothing either: that is not a busy worker.
      const alive = await channel.frameAlive(BUSY_MS);
      if (!stuck()) return;
      if (alive) this.recover("busy", null, head);
      else this.recover("crash", DEAD_FRAME);
    }, BUSY_MS);
    this.busyWatch = { id: head, timer };
  }
}
