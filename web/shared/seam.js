// The one call layer between Reckon's contexts (docs/architecture.md, "One call
// layer"): `serve(port, methods)` on one side, `connect(port)` on the other. A call is
// `{type: "call", id, method, args}`, its reply `{type: "reply", id, status, ...}`
// (errors are data: `{status: "error", message}`), and one-way messages are
// `{type, ...fields}` (events, notes). Everything that arrives is data from another
// context: a reply counts only for a call still pending.
//
// The workers and the sandbox frame are classic scripts and cannot import a module:
// they run this same text, handed to them as SEAM_SOURCE (the page prepends it to the
// workers' scripts; the build inlines it before the frame's script). So everything is
// inside seam(), which uses nothing from outside itself.

/** @typedef {{status: string, message?: string, [k: string]: any}} Answer */
/** What the caller keeps of a pending call: how to end it, and whatever reading its
 * events needs (the sandbox keeps a run's streamed output here).
 * @typedef {{resolve: (reply: any) => void, method?: string, [k: string]: any}} Pending
 */
/** A port: a Worker, a MessagePort, a worker's own `self`.
 * @typedef {{postMessage: (msg: any, transfer: Transferable[]) => void, addEventListener: (type: "message", fn: (ev: MessageEvent) => void) => void,
 *   removeEventListener: (type: "message", fn: (ev: MessageEvent) => void) => void, start?: () => void}} PortLike
 */
/** What a handler learns of the call it answers: its id, and the ports sent with it.
 * @typedef {{id: number, ports: readonly MessagePort[]}} CallInfo
 */
/** A method's reply, with what to transfer, or null when it answered another way.
 * @template R @typedef {R | [R, Transferable[]] | null} Served
 */
/** The handlers of a typed interface M (each method takes `args` and gives its reply).
 * @template M
 * @typedef {{[K in keyof M]: M[K] extends (args: infer A) => infer R ? (args: A, call: CallInfo) => Served<R> | Promise<Served<R>> : never}} Handlers
 */
/** @template M @template {keyof M} K @typedef {M[K] extends (args: infer A) => any ? A : never} ArgsOf */
/** A reply: the method's, or an error as data (any call may end so).
 * @template M @template {keyof M} K @typedef {M[K] extends (args: any) => infer R ? R & {type: "reply", id: number, message?: string} : never} ReplyOf */
/** @typedef {{transfer?: Transferable[], id?: number, about?: Record<string, any>, timeoutMs?: number, late?: Answer}} CallOptions */
/** @typedef {(msg: Record<string, any>, ports: readonly MessagePort[]) => void} OnMessage */
/**
 * @typedef {{on?: Record<string, OnMessage>, ordered?: boolean, accept?: (ev: MessageEvent) => boolean,
 *   onReply?: (msg: Record<string, any>, entry: Pending) => boolean}} ConnectOptions
 * `on`: one-way messages by type; `ordered`: the other end answers one call at a time in
 * the order sent, so only the call at the head of the line may be answered; `accept`:
 * which events to read at all; `onReply`: sees a pending call's reply first (true: taken).
 */
/**
 * @typedef {{on?: Record<string, OnMessage>, queue?: boolean, accept?: (ev: MessageEvent) => boolean,
 *   gate?: (method: string) => string | null | Promise<string | null>, onCall?: (id: number) => void,
 *   begin?: (id: number) => boolean, describe?: (err: unknown) => string}} ServeOptions
 * `queue`: calls are answered one at a time, in the order they came; `gate`: why a call
 * may not run now (its error message), or null; `onCall`: told of each call at once,
 * before the queue; `begin`: told as a call starts, and asked again before a thrown
 * error is answered: false to answer nothing (the worker is being replaced);
 * `describe`: a thrown error as a message.
 */

export function seam() {
  /** @param {unknown} msg @returns {msg is Record<string, any>} */
  const isMessage = (msg) => Boolean(msg) && typeof msg === "object";
  /** @param {unknown} err */
  const describeError = (err) => String((err && /** @type {any} */ (err).message) || err);

  /** One end of a port: its calls, the calls it serves, its one-way messages. */
  class Endpoint {
    /** @param {PortLike | null} port @param {ServeOptions & ConnectOptions} options */
    constructor(port, options) {
      this.options = options;
      this.on = options.on || {};
      this.nextId = 1;
      /** @type {Map<number, Pending>} the calls made here, not answered yet */
      this.pending = new Map();
      /** @type {number[]} ids in the order sent (ordered only) */
      this.order = [];
      /** @type {Record<string, (args: any, call: CallInfo) => any> | null} */
      this.methods = null;
      /** @type {Array<() => Promise<unknown>>} */
      this.queue = [];
      this.pumping = false;
      /** @type {PortLike | null} */
      this.port = null;
      /** @param {MessageEvent} ev */
      this.listener = (ev) => {
        if (this.options.accept && !this.options.accept(ev)) return;
        this.receive(ev.data, ev);
      };
      if (port) this.attach(port);
    }

    /** Talk over `port` from now on; what the previous port still sends is dropped. @param {PortLike} port */
    attach(port) {
      if (this.port) this.port.removeEventListener("message", this.listener);
      this.port = port;
      port.addEventListener("message", this.listener);
      if (port.start) port.start();
      return this;
    }

    /** Stop listening, and close the port if it can be (a MessagePort). */
    close() {
      if (!this.port) return;
      this.port.removeEventListener("message", this.listener);
      const port = /** @type {{close?: () => void}} */ (this.port);
      if (port.close) port.close();
      this.port = null;
    }

    /** @param {Record<string, any>} msg @param {Transferable[]} [transfer] */
    post(msg, transfer = []) {
      if (this.port) this.port.postMessage(msg, transfer);
    }

    /** A one-way message: `{type, ...fields}`. @param {string} type @param {Record<string, unknown>} [fields] @param {Transferable[]} [transfer] */
    notify(type, fields = {}, transfer = []) {
      this.post({ ...fields, type }, transfer);
    }

    /** A message from the other end. Its event's ports are read only for a call or a
     * handler that takes them (a second parameter): reading them makes a new array each
     * time, which a flood of stream events paid for (a quarter of its time).
     * @param {unknown} msg @param {MessageEvent} ev */
    receive(msg, ev) {
      if (!isMessage(msg)) return;
      if (msg.type === "reply") this.take(msg);
      else if (msg.type === "call" && this.methods) this.answer(msg, ev.ports || []);
      else if (typeof msg.type === "string" && Object.hasOwn(this.on, msg.type)) {
        const handler = this.on[msg.type];
        handler(msg, handler.length > 1 ? ev.ports || [] : []);
      }
    }

    // The caller's side.

    /** The id of the call the other end is handling (ordered). */
    get head() {
      return this.order[0];
    }

    /** An id for a call made later (events about it may name it first). */
    reserve() {
      return this.nextId++;
    }

    /** Wait for the reply to call `id`, sent by another context (the sandbox frame sends
     * the worker its boot call). @param {number} id @param {Record<string, any>} [about]
     * kept with the call (a shallow copy: set what it holds before the call) @returns {Promise<any>} */
    expect(id, about = {}) {
      return new Promise((resolve) => this.pending.set(id, { ...about, resolve }));
    }

    /** A new worker, whose first call `id` another context sends: nothing else is in line. @param {number} id */
    begin(id) {
      this.order = [id];
      return this.expect(id);
    }

    /** Call `method` with `args`; resolves to its reply (never rejects: errors are data).
     * @param {string} method @param {Record<string, unknown>} [args] @param {CallOptions} [options] @returns {Promise<any>} */
    call(method, args = {}, { transfer = [], id = this.reserve(), about = {}, timeoutMs, late } = {}) {
      const reply = this.expect(id, { ...about, method });
      if (this.options.ordered) this.order.push(id);
      if (timeoutMs !== undefined) {
        const timer = setTimeout(() => this.settle(id, late || { status: "error", message: `no reply to ${method} within ${timeoutMs} ms` }), timeoutMs);
        reply.finally(() => clearTimeout(timer));
      }
      this.post({ type: "call", id, method, args }, transfer);
      return reply;
    }

    /** A call whose reply goes elsewhere: over a port sent with it (the frame hands a new
     * worker its boot call and the page's port; the worker answers the page).
     * @param {string} method @param {Record<string, unknown>} args @param {{id: number, transfer?: Transferable[]}} options */
    send(method, args, { id, transfer = [] }) {
      this.post({ type: "call", id, method, args }, transfer);
    }

    /** Take a reply if it answers a pending call (the head's, when ordered); true when it did. @param {Record<string, any>} msg */
    take(msg) {
      if (typeof msg.id !== "number" || (this.options.ordered && msg.id !== this.head)) return false;
      const entry = this.pending.get(msg.id);
      if (!entry) return false;
      if (this.options.onReply && this.options.onReply(msg, entry)) return true;
      return this.settle(msg.id, /** @type {Answer} */ (msg));
    }

    /** End pending call `id` with `reply` (the other end's, or one made here when it
     * cannot answer); true when it was pending. @param {number} id @param {Answer} reply */
    settle(id, reply) {
      const entry = this.pending.get(id);
      if (!entry) return false;
      this.pending.delete(id);
      if (id === this.head) this.order.shift();
      entry.resolve({ ...reply, type: "reply", id });
      return true;
    }

    /** End every pending call with `reply` (the other end is gone). @param {Answer} reply */
    failAll(reply) {
      for (const id of [...this.pending.keys()]) this.settle(id, reply);
    }

    /** Forget every call, answering none (the caller answers them first). */
    clear() {
      this.pending.clear();
      this.order = [];
    }

    // The served side.

    /** Answer a call: its method's reply, or an error as data. @param {Record<string, any>} msg @param {readonly MessagePort[]} [ports] */
    answer(msg, ports = []) {
      const id = typeof msg.id === "number" ? msg.id : NaN;
      const method = typeof msg.method === "string" ? msg.method : String(msg.type);
      const args = isMessage(msg.args) ? msg.args : {};
      if (this.options.onCall) this.options.onCall(id);
      const task = () => this.run(id, method, args, ports);
      if (!this.options.queue) return task();
      this.queue.push(task);
      if (!this.pumping) this.pump();
      return undefined;
    }

    async pump() {
      this.pumping = true;
      while (this.queue.length) {
        const next = /** @type {() => Promise<unknown>} */ (this.queue.shift());
        await next(); // a task answers for itself; the queue goes on
      }
      this.pumping = false;
    }

    /** @param {number} id @param {string} method @param {Record<string, any>} args @param {readonly MessagePort[]} ports */
    async run(id, method, args, ports) {
      const { begin, gate, describe = describeError } = this.options;
      if (begin && !begin(id)) return;
      /** @type {any} */
      let out;
      try {
        // The gate first: a method it refuses is refused, known here or not.
        const refused = (gate && (await gate(method))) || (!this.methods || !Object.hasOwn(this.methods, method) ? `unknown method ${method}` : null);
        out = refused ? { status: "error", message: refused } : await /** @type {Record<string, Function>} */ (this.methods)[method](args, { id, ports });
      } catch (err) {
        if (begin && !begin(id)) return;
        out = { status: "error", message: describe(err) };
      }
      if (out === null) return;
      const [reply, transfer] = Array.isArray(out) ? out : [out, []];
      this.post({ ...reply, type: "reply", id }, transfer);
    }
  }

  /**
   * Answer `port`'s calls with `methods` (each `(args, {id, ports}) => reply`).
   * @template M
   * @param {PortLike | null} port @param {Handlers<M>} methods @param {ServeOptions} [options]
   */
  function serve(port, methods, options = {}) {
    const end = new Endpoint(null, options);
    end.methods = /** @type {any} */ (methods);
    if (port) end.attach(port);
    return end;
  }

  /**
   * The caller's end of `port` (null: attach one later), typed by the interface M.
   * @template M
   * @param {PortLike | null} port @param {ConnectOptions} [options]
   * @returns {Caller<M>}
   */
  function connect(port, options = {}) {
    return /** @type {any} */ (new Endpoint(port, options));
  }

  return { serve, connect, Endpoint };
}

/**
 * An Endpoint whose calls are typed by the interface M.
 * @template M
 * @typedef {Omit<InstanceType<ReturnType<typeof seam>["Endpoint"]>, "call"> & {
 *   call<K extends keyof M & string>(method: K, args?: ArgsOf<M, K>, options?: CallOptions): Promise<ReplyOf<M, K>>}} Caller
 */
/** @typedef {InstanceType<ReturnType<typeof seam>["Endpoint"]>} Endpoint */

export const { serve, connect } = seam();

/** The same layer for a classic script: run this text first, inside its closure. */
export const SEAM_SOURCE = `const { serve, connect } = (${seam.toString()})();\n`;
